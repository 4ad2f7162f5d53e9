// libFuzzer target: arbitrary bytes as /etc/passwd text (what cordon's front end reads instead of
// asking NSS). An entry found is for the uid asked, from one line of seven fields.
#include <cordon/user_db.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < sizeof(uid_t)) return 0;
  uid_t uid;
  std::memcpy(&uid, data, sizeof uid);
  std::string_view text(reinterpret_cast<const char*>(data) + sizeof uid, size - sizeof uid);
  auto entry = cordon::passwd_entry(text, uid);
  if (!entry) return 0;
  if (entry->uid != uid || entry->name.empty()) __builtin_trap();
  for (std::string_view field : {std::string_view(entry->name), std::string_view(entry->home)})
    if (field.find(':') != std::string_view::npos || field.find('\n') != std::string_view::npos)
      __builtin_trap();
  return 0;
}
