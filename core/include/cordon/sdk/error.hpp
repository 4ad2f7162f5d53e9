// The one error type of cordon: a stable code, a message, a hint and an optional location.
#pragma once

#include <cordon/sdk/export.hpp>

#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// A position in a policy or settings file. Lines and columns count from 1; 0 means unknown.
struct CORDON_API Location {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col", "file:line" or "file", whichever is known.
  std::string str() const;
  bool operator==(const Location&) const = default;
};

/// Stable error codes, grouped by block. A code is never reused; the README documents each one.
namespace code {
// CRD1xxx isolation could not be established or proven
inline constexpr const char* kUnproven = "CRD1001";  ///< no backend proves every requirement
inline constexpr const char* kBackendResource =
    "CRD1002";  ///< a resource the backend needs is missing
inline constexpr const char* kIsolationFailed =
    "CRD1003";  ///< a mechanism failed while setting up a run
inline constexpr const char* kBackendUnavailable =
    "CRD1004";  ///< the named backend is not usable here
inline constexpr const char* kServiceUnreachable =
    "CRD1005";  ///< a daemon or service the backend drives did not answer, or went away mid-run
inline constexpr const char* kUntrustedState =
    "CRD1006";  ///< a directory or file of cordon's own state is not cordon's own
inline constexpr const char* kUnmaskableName =
    "CRD1007";  ///< a blocked file has another name (a hard link) that no mask can cover
inline constexpr const char* kHostKey =
    "CRD1008";  ///< a remote host's key is unknown or differs from the known one
inline constexpr const char* kLoginRefused =
    "CRD1009";  ///< a remote host refused the login (key, user or method)
inline constexpr const char* kCredentialsRefused =
    "CRD1010";  ///< a hosted service refused cordon's credentials (its API key)
// CRD2xxx policy file and settings
inline constexpr const char* kFileUnreadable = "CRD2001";
inline constexpr const char* kSyntax = "CRD2002";
inline constexpr const char* kUnknownKey = "CRD2003";
inline constexpr const char* kWrongType = "CRD2004";
inline constexpr const char* kBadValue = "CRD2005";
inline constexpr const char* kContradiction = "CRD2006";
inline constexpr const char* kUnknownPreset = "CRD2007";
inline constexpr const char* kExtendsCycle = "CRD2008";
inline constexpr const char* kExtendsTooDeep = "CRD2009";
inline constexpr const char* kDuplicateKey = "CRD2010";
inline constexpr const char* kUnknownFormat = "CRD2011";
inline constexpr const char* kVersion = "CRD2012";
inline constexpr const char* kTooManyErrors = "CRD2013";
inline constexpr const char* kInputRejected =
    "CRD2014";                                          ///< too large, too deep, binary, not UTF-8
inline constexpr const char* kBadSettings = "CRD2015";  ///< a backend's settings table is invalid
inline constexpr const char* kMissingKey = "CRD2016";
inline constexpr const char* kPolicyWarning =
    "CRD2017";  ///< warning: valid, but will likely not work as meant
// CRD3xxx plugins
inline constexpr const char* kPluginLoad = "CRD3001";
inline constexpr const char* kPluginSymbol = "CRD3002";
inline constexpr const char* kPluginAbi = "CRD3003";
inline constexpr const char* kPluginToolchain = "CRD3004";
inline constexpr const char* kPluginFactory = "CRD3005";
inline constexpr const char* kPluginProbe = "CRD3006";
inline constexpr const char* kPluginShadowed = "CRD3007";
inline constexpr const char* kPluginNotAllowed = "CRD3008";
inline constexpr const char* kPluginDigest = "CRD3009";
inline constexpr const char* kUnknownBackend = "CRD3010";
inline constexpr const char* kPluginConfig = "CRD3011";
inline constexpr const char* kPluginName = "CRD3012";  ///< info record name differs from file name
inline constexpr const char* kPluginDir = "CRD3013";   ///< a plugin directory cannot be read
inline constexpr const char* kFullExecutable = "CRD3014";  ///< the front end cannot hand off
// CRD4xxx refused input
inline constexpr const char* kShellOperator = "CRD4001";
inline constexpr const char* kFlagInjection = "CRD4002";
inline constexpr const char* kControlChar = "CRD4003";
inline constexpr const char* kPathEscape = "CRD4004";
inline constexpr const char* kBlockedCommand = "CRD4005";
inline constexpr const char* kBadRequest = "CRD4006";
inline constexpr const char* kBadArgument = "CRD4007";  ///< bad CLI argument (duration, workspace)
inline constexpr const char* kBlockedPath = "CRD4008";  ///< a file API path the policy blocks
inline constexpr const char* kWorkspaceIo = "CRD4009";  ///< a file API operation failed
inline constexpr const char* kNotApproved =
    "CRD4010";  ///< an approval the operator requires was declined, or could not be asked
// CRD5xxx execution
inline constexpr const char* kTimeout = "CRD5001";
inline constexpr const char* kOutputTruncated = "CRD5002";
inline constexpr const char* kBackendFault = "CRD5003";
inline constexpr const char* kNotFound = "CRD5004";
inline constexpr const char* kNotExecutable = "CRD5005";
inline constexpr const char* kStateIo = "CRD5006";  ///< cordon cannot read or write its own state
// CRD6xxx jobs
inline constexpr const char* kNoSuchJob = "CRD6001";
inline constexpr const char* kJobRunning = "CRD6002";  ///< remove refused: the job still runs
inline constexpr const char* kJobStart = "CRD6003";    ///< the supervisor could not be started
inline constexpr const char* kJobState = "CRD6004";    ///< a job's state files are unreadable
// CRD7xxx conformance (`cordon certify`)
inline constexpr const char* kCorpusMissing = "CRD7001";  ///< the corpus or the probe is not there
inline constexpr const char* kCorpusBad = "CRD7002";      ///< a corpus file is malformed
inline constexpr const char* kNotCertified = "CRD7003";   ///< a claimed capability did not hold
}  // namespace code

/// A failure with a stable code. Messages are lowercase, values quoted, no trailing period.
class CORDON_API Error : public std::exception {
 public:
  Error(std::string code, std::string message, std::string hint = {},
        std::optional<Location> where = std::nullopt);

  const std::string& code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& hint() const noexcept { return hint_; }
  const std::optional<Location>& where() const noexcept { return where_; }

  /// "file:line:col: message" (or just the message when there is no location).
  const char* what() const noexcept override { return text_.c_str(); }

  /// The one-line rendering the CLI prints: "error[CRD2003]: file:1:2: message".
  std::string render() const;

  /// Adds outer context while keeping the innermost code: "outer: inner".
  Error wrap(const std::string& outer) const;

 private:
  std::string code_;
  std::string message_;
  std::string hint_;
  std::optional<Location> where_;
  std::string text_;
};

/// Several errors at once, as a policy check reports every problem of a file.
class CORDON_API ErrorList : public std::exception {
 public:
  explicit ErrorList(std::vector<Error> errors);
  const std::vector<Error>& errors() const noexcept { return errors_; }
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::vector<Error> errors_;
  std::string text_;
};

}  // namespace cordon
