// Spill files of the agent server.
#include "mcp_spill.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/request.hpp>

#include <algorithm>
#include <random>
#include <utility>

namespace cordon::cli::mcp {

namespace json = boost::json;

namespace {

constexpr std::uint64_t kChunk = 1u << 20;

// `data` cut back to a whole UTF-8 character when a chunk ended inside one.
bool utf8_prefix(std::string& data) {
  for (int cut = 0; cut <= 3 && data.size() >= static_cast<std::size_t>(cut); ++cut) {
    if (is_utf8(std::string_view(data).substr(0, data.size() - cut))) {
      data.resize(data.size() - cut);
      return true;
    }
  }
  return false;
}

bool plain_id(const std::string& id) {
  return id.rfind("out-", 0) == 0 && id.size() > 4 &&
         id.find_first_not_of("0123456789", 4) == std::string::npos;
}

}  // namespace

SpillSink::SpillSink(const PrivateDir& dir, std::string id, std::uint64_t hold, OutputSink& inner)
    : dir_(dir), id_(std::move(id)), hold_(std::min(hold, kSpillHoldMax)), inner_(inner) {}

void SpillSink::write(Stream stream, std::string_view chunk) {
  inner_.write(stream, chunk);
  if (failed_ || written_ >= kSpillMax) return;
  std::string_view part = chunk.substr(0, kSpillMax - written_);
  if (!fd_) {
    if (held_.size() + part.size() <= hold_) {
      held_.append(part);
      written_ += part.size();
      return;
    }
    try {
      fd_ = dir_.create_file(id_, O_WRONLY);
    } catch (const Error&) {
      failed_ = true;  // the result still carries head and tail, and names no spill
      return;
    }
    const std::string held = std::exchange(held_, std::string());
    written_ = 0;  // counted again as the held part is written
    if (!put(held)) return;
  }
  put(part);
}

bool SpillSink::put(std::string_view part) {
  while (!part.empty()) {
    ssize_t n = ::write(fd_.get(), part.data(), part.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    part.remove_prefix(static_cast<std::size_t>(n));
    written_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

Spill::Spill(const std::filesystem::path& state) {
  if (state.empty()) return;
  try {
    std::random_device rd;
    char name[48];
    std::snprintf(name, sizeof name, "server-%d-%08x", static_cast<int>(::getpid()), rd());
    dir_ = PrivateDir::create(state).subdir(name);
  } catch (const Error&) {
    dir_.reset();  // spilling off: results still carry head and tail
  }
}

Spill::~Spill() {
  if (!dir_) return;
  try {
    auto parent = PrivateDir::open(dir_->path().parent_path());
    if (parent) parent->remove(dir_->path().filename().string());
  } catch (const Error&) {
  }
}

std::filesystem::path Spill::dir() const { return dir_ ? dir_->path() : std::filesystem::path(); }

std::unique_ptr<SpillSink> Spill::sink(OutputSink& inner, std::uint64_t hold) {
  if (!dir_) return nullptr;
  std::lock_guard lock(mutex_);
  return std::make_unique<SpillSink>(*dir_, "out-" + std::to_string(++next_), hold, inner);
}

bool Spill::owns(const std::string& id) const {
  return dir_ && plain_id(id) && dir_->open_file(id, O_RDONLY).get() >= 0;
}

boost::json::object Spill::read(const std::string& id, std::uint64_t since) {
  OwnedFd fd = dir_ && plain_id(id) ? dir_->open_file(id, O_RDONLY) : OwnedFd();
  if (fd.get() < 0)
    throw Error(code::kNoSuchJob, "no output '" + id + "' is kept by this server",
                "use the process_id a result named");
  struct stat st {};
  ::fstat(fd.get(), &st);
  auto total = static_cast<std::uint64_t>(st.st_size);
  if (since > total)
    throw Error(code::kBadArgument,
                "'since' is past the end of " + id + " (" + std::to_string(total) + " bytes)");
  std::string data(static_cast<std::size_t>(std::min(kChunk, total - since)), '\0');
  ssize_t n = ::pread(fd.get(), data.data(), data.size(), static_cast<off_t>(since));
  data.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  json::object r{{"process_id", id},
                 {"next_offset", since + data.size()},
                 {"total_bytes", total},
                 {"more", since + data.size() < total}};
  std::string text = data;
  if (!data.empty() && utf8_prefix(text) && !text.empty()) {
    r["output"] = text;
    r["next_offset"] = since + text.size();
  } else if (!data.empty()) {
    r["output_base64"] = encode_base64(data);
  } else {
    r["output"] = "";
  }
  return r;
}

void Spill::drop(const std::string& id) {
  if (dir_ && plain_id(id)) dir_->remove(id);
}

}  // namespace cordon::cli::mcp
