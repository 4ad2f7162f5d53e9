// Sealed job records (job_seal.hpp).
#include "job_seal.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/user_db.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <utility>

#include "sha256.hpp"

namespace cordon::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::size_t kHashBlock = 64;  // SHA-256's block size
constexpr const char* kKeyFile = "job-seal.key";

std::string raw_sha256(std::string_view a, std::string_view b) {
  Sha256 h;
  h.update(a);
  h.update(b);
  std::string hex = h.hex(), raw;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return raw;
}

// Where the key lives: cordon's own state of this user by the password database (not by the
// environment, which may differ between the process that starts a job and the one that stops
// it); every run keeps that directory out of the command's reach (state_roots()).
fs::path key_dir() {
  if (auto user = find_user(::getuid()); user && fs::path(user->home).is_absolute() &&
                                         fs::path(user->home) != fs::path(user->home).root_path())
    return fs::path(user->home) / ".local" / "state" / "cordon";
  if (::geteuid() == 0) return "/var/lib/cordon";
  throw Error(code::kJobState,
              "no place for the key that seals job records: this user has no home in the "
              "password database",
              "run jobs as a user with a home directory");
}

std::string new_key() {
  std::array<char, 32> bytes{};
  std::ifstream rnd("/dev/urandom", std::ios::binary);
  if (!rnd.read(bytes.data(), bytes.size()))
    throw Error(code::kJobState, "cannot read /dev/urandom for the job records' key");
  return std::string(bytes.data(), bytes.size());
}

std::string load_key() {
  PrivateDir dir = PrivateDir::create(key_dir());
  if (auto key = dir.read_file(kKeyFile, 64); key && key->size() == 32) return *key;
  // Made once: another process may make it at the same moment; the first one's key wins.
  std::string key = new_key();
  try {
    auto fd = dir.create_file(kKeyFile, O_WRONLY, 0600);
    if (::write(fd.get(), key.data(), key.size()) != static_cast<ssize_t>(key.size()))
      throw Error(code::kJobState, "cannot write the job records' key");
    return key;
  } catch (const Error&) {
    // Made by another process meanwhile: its key, once it has written it.
    for (int i = 0; i < 100; ++i) {
      if (auto again = dir.read_file(kKeyFile, 64); again && again->size() == 32) return *again;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (dir.read_file(kKeyFile, 64))  // there, but not 32 bytes
      throw Error(
          code::kJobState,
          "the key that seals job records ('" + (dir.path() / kKeyFile).string() + "') is damaged",
          "remove it: a new one is made, and the jobs sealed with the old one can only be "
          "removed by hand");
    throw;
  }
}

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  std::string k(key);
  if (k.size() > kHashBlock) k = raw_sha256(k, "");
  k.resize(kHashBlock, '\0');
  std::string inner(kHashBlock, '\0'), outer(kHashBlock, '\0');
  for (std::size_t i = 0; i < kHashBlock; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  Sha256 h;
  h.update(outer);
  h.update(raw_sha256(inner, message));
  return h.hex();
}

std::string record_seal(std::string_view key, std::string_view id, std::string_view name,
                        std::string_view text) {
  std::string message;
  message.append(id).push_back('\0');
  message.append(name).push_back('\0');
  message.append(text);
  return hmac_sha256_hex(key, message);
}

const std::string& job_seal_key() {
  static std::mutex mutex;
  static std::optional<std::string> key;
  std::lock_guard lock(mutex);
  if (!key) key = load_key();
  return *key;
}

// The seal is the object's last member, appended to the text it seals: the reader checks the
// very bytes that were sealed, never a serialization of its own (numbers need not come back
// the same).
void write_sealed(const PrivateDir& dir, const char* name, json::object record) {
  record.erase(kSealMember);
  const std::string id = dir.path().filename().string();
  const std::string text = json::serialize(record);
  const std::string seal = record_seal(job_seal_key(), id, name, text);
  std::string file = text.substr(0, text.size() - 1);
  if (!record.empty()) file += ',';
  file += std::string("\"") + kSealMember + "\":\"" + seal + "\"}";
  dir.write_file(name, file);
}

namespace {

// The text `file` sealed and its seal, when `file` ends with a seal member as write_sealed()
// appends it; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> split_seal(const std::string& file) {
  const std::string head = std::string("\"") + kSealMember + "\":\"";
  const std::size_t tail = head.size() + 64 + 2;  // the member, its 64 hex digits, "}
  if (file.size() < tail + 1 || file.compare(file.size() - 2, 2, "\"}") != 0 ||
      file.compare(file.size() - tail, head.size(), head) != 0)
    return std::nullopt;
  std::string seal = file.substr(file.size() - 66, 64);
  std::string text = file.substr(0, file.size() - tail);
  if (text == "{") return std::make_pair(std::string("{}"), seal);
  if (text.empty() || text.back() != ',') return std::nullopt;
  text.back() = '}';
  return std::make_pair(text, seal);
}

}  // namespace

std::optional<json::object> read_sealed(const PrivateDir& dir, const char* name, bool unsealed_ok) {
  auto file = dir.read_file(name);
  if (!file) return std::nullopt;
  boost::system::error_code ec;
  auto v = json::parse(*file, ec);
  const std::string where = (dir.path() / name).string();
  if (ec || !v.is_object())
    throw Error(code::kJobState, "job state file '" + where + "' is not a JSON object",
                "remove the job with 'cordon job remove'");
  json::object record = std::move(v.get_object());
  auto sealed = split_seal(*file);
  if (!sealed && unsealed_ok && !record.contains(kSealMember)) return record;
  const std::string id = dir.path().filename().string();
  if (!sealed || sealed->second != record_seal(job_seal_key(), id, name, sealed->first))
    throw Error(code::kUntrustedState,
                "job state file '" + where +
                    "' is not sealed by this user's cordon: something else wrote it (a command "
                    "of a run that can write the job directory?); it is not acted on",
                "keep job directories (--state-dir) out of every run's workspace and write "
                "paths; remove this job's directory by hand once you have checked it");
  record.erase(kSealMember);
  return record;
}

}  // namespace cordon::detail
