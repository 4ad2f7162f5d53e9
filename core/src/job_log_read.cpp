// Reading a job's log: its tail by lines, or everything from a byte offset of the job's output,
// never leaving out a line without saying so.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "job_log.hpp"

namespace cordon::detail {

namespace {

std::uint64_t size_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// How the file maps to the job's output: after `note` bytes (the line a rotation left, if any)
// comes the output from byte `base` on.
struct Origin {
  std::uint64_t note = 0;
  std::uint64_t base = 0;
};

// A note is recognised only in a rotated log, when its head is exactly the note for its count.
Origin origin_of(int fd, std::uint64_t size) {
  static const std::string prefix = "[cordon: ";
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (st.st_mode & 0777) != kRotatedLogMode) return {};
  std::string head =
      read_range(fd, 0, static_cast<std::size_t>(std::min<std::uint64_t>(size, 128)));
  if (head.compare(0, prefix.size(), prefix) != 0) return {};
  std::size_t end = prefix.size();
  std::uint64_t count = 0;
  while (end < head.size() && end < prefix.size() + 19 && head[end] >= '0' && head[end] <= '9')
    count = count * 10 + static_cast<std::uint64_t>(head[end++] - '0');
  std::string note = log_note(count);
  if (end == prefix.size() || head.compare(0, note.size(), note) != 0) return {};
  return {note.size(), count};
}

std::string window_marker(bool cut, std::size_t window) {
  std::string w = std::to_string(window) + "-byte window of --tail";
  if (cut)
    return "[cordon: the next line is cut: it starts before the " + w +
           " ('job output --since 0' reads all of it)]\n";
  return "[cordon: earlier lines are not shown: they lie before the " + w +
         " ('job output --since 0' reads them)]\n";
}

// The start of the last `lines` lines of `text`, and how many full lines were found before it.
std::size_t last_lines(const std::string& text, std::size_t lines, std::size_t& found) {
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // the final newline ends the last line
  std::size_t start = end;
  found = 0;
  for (; start > 0; --start)
    if (text[start - 1] == '\n' && ++found == lines) break;
  return start;
}

}  // namespace

JobOutput tail_lines(int fd, std::size_t lines, std::size_t window) {
  JobOutput out;
  if (fd < 0) return out;
  std::uint64_t size = size_of(fd);
  Origin origin = origin_of(fd, size);
  out.next_offset = origin.base + (size - origin.note);
  if (lines == 0 || size == 0) return out;
  std::uint64_t from = size > window ? size - window : 0;
  std::string text = read_range(fd, from, static_cast<std::size_t>(size - from));
  std::size_t found = 0;
  std::size_t start = last_lines(text, lines, found);
  if (start > 0 || from == 0) {
    out.text = text.substr(start);
    return out;
  }
  // The window ran out first: its first line is whole only when a newline comes just before.
  bool cut = read_range(fd, from - 1, 1) != "\n";
  if (cut || found + 1 < lines) out.text = window_marker(cut, window);
  out.text += text;
  return out;
}

JobOutput read_since(int fd, std::uint64_t offset, std::size_t max_bytes) {
  std::uint64_t size = fd < 0 ? 0 : size_of(fd);
  Origin origin = fd < 0 ? Origin{} : origin_of(fd, size);
  std::uint64_t end = origin.base + (size - origin.note);
  if (offset > end)
    throw Error(code::kBadArgument,
                "offset " + std::to_string(offset) + " is past the end of the job's output (" +
                    std::to_string(end) + " bytes so far)",
                "pass 0, or the next offset an earlier call returned");
  JobOutput out;
  std::uint64_t from = std::max(offset, origin.base);
  if (from > offset) {
    out.dropped_bytes = from - offset;
    out.text = "[cordon: " + std::to_string(out.dropped_bytes) +
               " bytes of output before this were dropped (limits.max_log_bytes)]\n";
  }
  std::uint64_t len = std::min<std::uint64_t>(end - from, std::max<std::size_t>(max_bytes, 1));
  std::string data =
      read_range(fd, origin.note + (from - origin.base), static_cast<std::size_t>(len));
  if (from + data.size() < end) {
    out.more = true;
    if (auto nl = data.rfind('\n'); nl != std::string::npos) data.resize(nl + 1);
  }
  out.next_offset = from + data.size();
  out.text += data;
  return out;
}

}  // namespace cordon::detail
