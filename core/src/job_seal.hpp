// Sealed job records. A job's directory may lie where another run's command can write (a
// `--state-dir` inside a workspace), and `job stop`, `job remove` and `job gc` act on what its
// records name: the supervisor's process, its session, the backend and its settings. So every
// record (job.json, supervisor.json, result.json) carries a seal, an HMAC-SHA256 over the job's
// id, the file's name and its contents, under a key that only cordon's own state holds (its
// default state directory of the user, which no run reaches). A record whose seal is missing or
// wrong is refused (CRD1006), never acted on. Internal to the jobs module.
#pragma once

#include <cordon/sdk/export.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace cordon::detail {

/// The member of a record that holds its seal.
inline constexpr const char* kSealMember = "seal";

/// HMAC-SHA256 of `message` under `key`, as 64 lowercase hex digits. Pure.
CORDON_API std::string hmac_sha256_hex(std::string_view key, std::string_view message);

/// The seal of the record `name` of job `id` whose other members serialize to `text`. Pure.
CORDON_API std::string record_seal(std::string_view key, std::string_view id, std::string_view name,
                                   std::string_view text);

/// This user's sealing key: 32 random bytes in cordon's own state directory of the user
/// (<home from the password database>/.local/state/cordon, /var/lib/cordon for root without
/// one), made on first use. Read once per process. Throws Error CRD6004 when there is no such
/// place, CRD1006 when the file is not cordon's own.
const std::string& job_seal_key();

/// Writes `record` (without a seal member) as the file `name` of the job directory `dir`,
/// sealed for the job `dir` is named after. Throws Error.
void write_sealed(const PrivateDir& dir, const char* name, boost::json::object record);

/// The record `name` of the job directory `dir` without its seal member; nullopt when there is
/// no such file. Throws Error CRD6004 when it is not a JSON object, CRD1006 when its seal is
/// missing or does not hold (changed by something other than cordon), unless `unsealed_ok`
/// (a record in the default job directory, which no run reaches, written before seals).
std::optional<boost::json::object> read_sealed(const PrivateDir& dir, const char* name,
                                               bool unsealed_ok);

}  // namespace cordon::detail
