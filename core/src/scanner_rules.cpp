// The scanner's rules: what is risky in Python and shell, and why.
#include "scanner_rules.hpp"

namespace cordon::detail {

const std::vector<ScanRule>& python_rules() {
  static const std::vector<ScanRule> rules = {
      {"python.b64-exec", Severity::critical, R"(\b(exec|eval)\s*\([^\n]*b(ase)?64)",
       "executes base64-decoded code, hiding what runs"},
      {"python.fork-bomb", Severity::critical, R"(while\s+(True|1)\s*:\s*os\.fork\s*\()",
       "forks without end (fork bomb)"},
      {"python.shell-true", Severity::high, R"(\bsubprocess\.\w+\s*\([^\n]*shell\s*=\s*True)",
       "runs a command through a shell"},
      {"python.os-system", Severity::high, R"(\bos\.(system|popen)\s*\()",
       "runs a command through a shell"},
      {"python.eval", Severity::high, R"((^|[^.\w])(eval|exec)\s*\()",
       "evaluates code built at run time"},
      {"python.dynamic-import", Severity::medium, R"(\b__import__\s*\(|\bimportlib\.import_module)",
       "imports a module chosen at run time"},
      {"python.subprocess", Severity::medium,
       R"(\bsubprocess\.(run|call|Popen|check_output|check_call|getoutput|getstatusoutput)\b)",
       "starts another program"},
      {"python.os-exec", Severity::medium,
       R"(\bos\.(exec\w*|spawn\w*|posix_spawn\w*)\s*\(|\bpty\.spawn)",
       "replaces or starts a process"},
      {"python.fork", Severity::medium, R"(\bos\.fork\s*\()", "creates processes"},
      {"python.network", Severity::medium,
       R"(\bsocket\.socket\s*\(|\burllib\.request\b|\burlopen\s*\(|\brequests\.(get|post|put|patch|delete|head|request|Session)\b|\bhttp\.client\b|\b(ftplib|smtplib|telnetlib|paramiko)\b)",
       "opens a network connection"},
      {"python.delete-tree", Severity::high, R"(\bshutil\.rmtree\s*\()",
       "deletes a directory tree"},
      {"python.delete", Severity::medium,
       R"(\bos\.(remove|unlink|rmdir|removedirs)\s*\(|\.unlink\s*\()", "deletes files"},
      {"python.deserialize", Severity::high, R"(\b(pickle|marshal|dill)\.loads?\s*\()",
       "deserialises data that can run code"},
      {"python.ctypes", Severity::medium, R"(\bctypes\b)", "calls native code directly"},
  };
  return rules;
}

const std::vector<ScanRule>& bash_rules() {
  static const std::vector<ScanRule> rules = {
      // The name must start after a non-name character: unanchored, the search retried the
      // greedy name at every position of a long word (2 s for one 8 KiB line).
      {"bash.fork-bomb", Severity::critical, R"((^|[^\w:])([\w:]+)\s*\(\)\s*\{\s*\2\s*\|\s*\2\s*&)",
       "a function that pipes into itself in the background (fork bomb)"},
      {"bash.b64-exec", Severity::critical,
       R"(base64\s+(-d|--decode|-D)[^\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b)",
       "executes base64-decoded code, hiding what runs"},
      {"bash.curl-pipe-shell", Severity::critical,
       R"(\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b)",
       "downloads code and runs it unseen"},
      {"bash.dev-tcp", Severity::critical, R"(/dev/(tcp|udp)/)",
       "opens a raw network connection (a common reverse shell)"},
      {"bash.rm-root", Severity::critical,
       R"(\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+)+(--no-preserve-root\s+)?(/|~|\$HOME|/\*|\*)(\s|$))",
       "recursively deletes the root, the home directory or everything here"},
      {"bash.mkfs", Severity::critical, R"(\b(mkfs(\.\w+)?|fdisk|wipefs)\b|\bdd\b[^\n]*of=/dev/)",
       "writes to a block device"},
      {"bash.eval", Severity::high, R"((^|[;&|]\s*|\s)eval\s)", "evaluates text built at run time"},
      {"bash.privilege", Severity::high, R"((^|[;&|(]\s*|\s)(sudo|su|doas|pkexec)\s)",
       "tries to gain privileges"},
      {"bash.setuid", Severity::high, R"(\bchmod\s+([ugoa]*\+s|[0-7]?[4-7][0-7]{3})\b)",
       "makes a program setuid/setgid"},
      {"bash.world-writable", Severity::medium, R"(\bchmod\s+(-R\s+)?(777|a\+w|o\+w)\b)",
       "makes files writable by everyone"},
      {"bash.rm-recursive", Severity::medium, R"(\brm\s+(-[a-zA-Z]*[rRf][a-zA-Z]*\s*)+)",
       "deletes files"},
      {"bash.network", Severity::medium,
       R"((^|[;&|(]\s*|\s)(curl|wget|nc|ncat|netcat|socat|ssh|scp|sftp|rsync|telnet|ftp)\s)",
       "opens a network connection"},
      {"bash.shell-exec", Severity::medium, R"((^|[;&|(]\s*|\s)(ba|z|da)?sh\s+-c\s)",
       "runs a command string through a shell"},
      {"bash.background", Severity::low, R"(\bnohup\b|\bdisown\b|\bsetsid\b)",
       "leaves a process running after the script"},
  };
  return rules;
}

const std::vector<ScanRule>& common_rules() {
  static const std::vector<ScanRule> rules = {
      {"any.credentials", Severity::high,
       R"((~|\$HOME|/home/\w+|/root)/\.(ssh|aws|gnupg|kube|docker|netrc|git-credentials|config/gcloud)\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|/etc/(shadow|gshadow|sudoers)\b)",
       "reads or writes credentials"},
  };
  return rules;
}

}  // namespace cordon::detail
