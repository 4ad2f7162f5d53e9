// Tar archives (cordon/sdk/tar.hpp): ustar headers; a name or link target that does not fit goes
// in a pax extended header first.
#include <cordon/sdk/tar.hpp>

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace cordon::sdk {

namespace {

constexpr std::size_t kBlock = 512;

// width - 1 octal digits, zero-padded, then NUL; a value that does not fit is refused rather
// than cut (the upload cap keeps sizes far below 8 GiB).
void octal(char* field, std::size_t width, std::uint64_t value) {
  for (std::size_t i = width - 1; i-- > 0; value >>= 3)
    field[i] = static_cast<char>('0' + (value & 7));
  if (value != 0) throw std::length_error("tar: a header number does not fit its field");
  field[width - 1] = '\0';
}

void pad(std::string& out) { out.append((kBlock - out.size() % kBlock) % kBlock, '\0'); }

// "LEN key=value\n", LEN counting the whole record, its own digits included.
std::string pax_record(std::string_view key, std::string_view value) {
  std::size_t body = key.size() + value.size() + 3;  // space, '=', newline
  std::size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

void header(std::string& out, char type, std::string_view name, unsigned mode,
            std::string_view link, std::uint64_t size, std::int64_t mtime) {
  char h[kBlock] = {};
  if (!name.empty()) std::memcpy(h, name.data(), std::min<std::size_t>(name.size(), 100));
  octal(h + 100, 8, mode & 07777);
  octal(h + 108, 8, 0);
  octal(h + 116, 8, 0);
  octal(h + 124, 12, size);
  octal(h + 136, 12, static_cast<std::uint64_t>(mtime < 0 ? 0 : mtime));
  std::memset(h + 148, ' ', 8);
  h[156] = type;
  if (!link.empty()) std::memcpy(h + 157, link.data(), std::min<std::size_t>(link.size(), 100));
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 265, "root", 4);
  std::memcpy(h + 297, "root", 4);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  out.append(h, kBlock);
}

}  // namespace

void TarWriter::entry(char type, std::string_view path, unsigned mode, std::string_view link,
                      std::uint64_t size, std::int64_t mtime) {
  if (path.size() > 100 || link.size() > 100) {
    std::string pax;
    if (path.size() > 100) pax += pax_record("path", path);
    if (link.size() > 100) pax += pax_record("linkpath", link);
    header(out_, 'x', "././@PaxHeader", 0644, {}, pax.size(), mtime);
    out_ += pax;
    pad(out_);
  }
  header(out_, type, path.substr(0, 100), mode, link.substr(0, 100), size, mtime);
}

void TarWriter::directory(std::string_view path, unsigned mode) {
  entry('5', path, mode, {}, 0, 0);
}

void TarWriter::file(std::string_view path, unsigned mode, std::string_view content,
                     std::int64_t mtime) {
  entry('0', path, mode, {}, content.size(), mtime);
  out_.append(content);
  pad(out_);
}

void TarWriter::symlink(std::string_view path, std::string_view target) {
  entry('2', path, 0777, target, 0, 0);
}

std::string TarWriter::finish() {
  out_.append(2 * kBlock, '\0');
  return std::move(out_);
}

namespace {

std::uint64_t parse_octal(std::string_view field) {
  std::uint64_t v = 0;
  for (char c : field) {
    if (c == '\0' || c == ' ') {
      if (v) break;
      continue;
    }
    if (c < '0' || c > '7') throw std::runtime_error("a tar header has a bad number");
    v = v * 8 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::string cstring(std::string_view field) {
  return std::string(field.substr(0, field.find('\0')));
}

// The `path` record of a pax extended header, or "".
std::string pax_path(std::string_view records) {
  while (!records.empty()) {
    auto space = records.find(' ');
    if (space == std::string_view::npos) break;
    std::size_t len = std::stoul(std::string(records.substr(0, space)));
    if (len <= space || len > records.size()) throw std::runtime_error("a bad pax record");
    auto record = records.substr(space + 1, len - space - 2);  // without the newline
    if (record.rfind("path=", 0) == 0) return std::string(record.substr(5));
    records.remove_prefix(len);
  }
  return "";
}

}  // namespace

std::vector<TarFile> read_tar(std::string_view a) {
  std::vector<TarFile> out;
  std::string next_path;
  std::size_t at = 0;
  while (at + kBlock <= a.size()) {
    std::string_view h = a.substr(at, kBlock);
    if (h.find_first_not_of('\0') == std::string_view::npos) break;  // the end blocks
    std::uint64_t size = parse_octal(h.substr(124, 12));
    char type = h[156];
    std::size_t data = at + kBlock;
    if (size > a.size() - data) throw std::runtime_error("a tar entry runs past the archive");
    std::string_view body = a.substr(data, size);
    std::string name = cstring(h.substr(0, 100));
    std::string prefix = cstring(h.substr(345, 155));
    if (!prefix.empty()) name = prefix + "/" + name;
    if (type == 'x') {
      next_path = pax_path(body);
    } else if (type == 'L') {
      next_path = cstring(body);
    } else {
      if (type == '0' || type == '\0')
        out.push_back({next_path.empty() ? name : next_path, std::string(body)});
      next_path.clear();
    }
    at = data + (size + kBlock - 1) / kBlock * kBlock;
  }
  return out;
}

}  // namespace cordon::sdk
