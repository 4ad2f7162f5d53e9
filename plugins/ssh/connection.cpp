// libssh connections: connect, check the host key against the known-hosts file, log in.
#include "connection.hpp"

#include <libssh/libssh.h>
#include <poll.h>
#include <cordon/sdk/error.hpp>

#include <algorithm>
#include <chrono>

namespace cordon::ssh {

namespace {

std::string fingerprint_of(ssh_session s) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return "(no host key)";
  unsigned char* hash = nullptr;
  size_t len = 0;
  std::string out = "(no fingerprint)";
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) == 0) {
    char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
    if (text) out = text;
    ssh_string_free_char(text);
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return out;
}

std::string entry_line(ssh_session s) {
  char* line = nullptr;
  if (ssh_session_export_known_hosts_entry(s, &line) != SSH_OK || !line) return "";
  std::string out = line;
  ssh_string_free_char(line);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

Channel::~Channel() {
  if (!channel_) return;
  if (ssh_channel_is_open(channel_)) ssh_channel_close(channel_);
  ssh_channel_free(channel_);
}

Connection::Connection(const Target& target) : target_(target), session_(ssh_new()) {
  if (!session_) throw Error(code::kBackendResource, "libssh could not make a session");
  bool no = false;
  int port = target.port;
  long timeout = target.connect_timeout;
  int nodelay = 1;  // each run is a few small requests, each awaited: no Nagle delay on them
  ssh_options_set(session_, SSH_OPTIONS_PROCESS_CONFIG, &no);  // the settings are the truth
  ssh_options_set(session_, SSH_OPTIONS_NODELAY, &nodelay);
  ssh_options_set(session_, SSH_OPTIONS_HOST, target.host.c_str());
  ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
  ssh_options_set(session_, SSH_OPTIONS_USER, target.user.c_str());
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &timeout);
  ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, target.known_hosts.c_str());
  ssh_options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, target.known_hosts.c_str());
  try {  // a constructor that throws runs no destructor
    if (ssh_connect(session_) != SSH_OK)
      fail(code::kServiceUnreachable,
           "cannot reach " + target_.name() + ": " + ssh_get_error(session_));
    verify_host_key();
    log_in();
  } catch (...) {
    if (ssh_is_connected(session_)) ssh_disconnect(session_);
    ssh_free(session_);
    throw;
  }
}

Connection::~Connection() {
  server.reset();  // a channel is freed before its session
  if (ssh_is_connected(session_)) ssh_disconnect(session_);
  ssh_free(session_);
}

void Connection::fail(const char* code, const std::string& what) const { throw Error(code, what); }

void Connection::verify_host_key() {
  fingerprint_ = fingerprint_of(session_);
  enum ssh_known_hosts_e known = ssh_session_is_known_server(session_);
  if (known == SSH_KNOWN_HOSTS_OK) return;
  std::string where = "'" + target_.known_hosts + "'";
  std::string line = entry_line(session_);
  std::string add = "check the fingerprint " + fingerprint_ + " with the host's owner, then add " +
                    "this line to " + where + ": " + line;
  switch (known) {
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      throw Error(code::kHostKey,
                  "the host key of " + target_.name() + " (" + fingerprint_ +
                      ") differs from the one recorded in " + where +
                      ": refused (someone may be in the middle)",
                  "if the host was re-installed, check the new fingerprint with its owner and "
                  "replace its line in " +
                      where + " with: " + line);
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      throw Error(code::kHostKey,
                  "the host key of " + target_.name() + " (" + fingerprint_ + ") is not in " +
                      where + ": refused",
                  add);
    default:
      throw Error(code::kHostKey, "cannot check the host key of " + target_.name() + " against " +
                                      where + ": " + ssh_get_error(session_));
  }
}

void Connection::log_in() {
  int rc = SSH_AUTH_ERROR;
  if (target_.identity == "agent") {
    rc = ssh_userauth_agent(session_, nullptr);
  } else {
    ssh_key key = nullptr;
    int got =
        ssh_pki_import_privkey_file(target_.identity.c_str(), nullptr, nullptr, nullptr, &key);
    if (got != SSH_OK)
      throw Error(code::kLoginRefused,
                  "cannot read the private key '" + target_.identity + "'" +
                      (got == SSH_EOF ? ": missing or not readable" : ": not a key, or encrypted"),
                  "name an unencrypted key file in backends.ssh.identity, or \"agent\"");
    rc = ssh_userauth_publickey(session_, nullptr, key);
    ssh_key_free(key);
  }
  if (rc == SSH_AUTH_SUCCESS) return;
  throw Error(code::kLoginRefused,
              target_.name() + " refused the login with " +
                  (target_.identity == "agent" ? std::string("the agent's keys")
                                               : "the key '" + target_.identity + "'") +
                  (rc == SSH_AUTH_PARTIAL ? " (it asks for more methods)" : ""),
              "check that the key is in the remote account's authorized_keys and that the "
              "account is not locked");
}

std::unique_ptr<Channel> Connection::exec(const std::string& line) {
  ssh_channel ch = ssh_channel_new(session_);
  if (!ch) fail(code::kServiceUnreachable, "cannot open a channel to " + target_.name());
  auto channel = std::make_unique<Channel>(ch);
  if (ssh_channel_open_session(ch) != SSH_OK ||
      ssh_channel_request_exec(ch, line.c_str()) != SSH_OK)
    fail(code::kServiceUnreachable,
         "cannot start a command on " + target_.name() + ": " + ssh_get_error(session_));
  return channel;
}

Captured Connection::capture(const std::string& line, int seconds) {
  auto channel = exec(line);
  ssh_channel ch = channel->get();
  ssh_channel_send_eof(ch);
  Captured c;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buf[16384];
  while (!ssh_channel_is_eof(ch) || ssh_channel_poll(ch, 0) > 0 || ssh_channel_poll(ch, 1) > 0) {
    if (std::chrono::steady_clock::now() >= until)
      fail(code::kServiceUnreachable,
           target_.name() + " did not finish a probe command in " + std::to_string(seconds) + " s");
    int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, 100);
    if (n > 0) c.out.append(buf, static_cast<std::size_t>(n));
    int e = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
    if (e > 0) c.err.append(buf, static_cast<std::size_t>(e));
    if (n == SSH_ERROR || e == SSH_ERROR)
      fail(code::kServiceUnreachable, target_.name() + " went away: " + ssh_get_error(session_));
  }
  c.status = ssh_channel_get_exit_status(ch);
  return c;
}

bool Connection::alive() const { return ssh_is_connected(session_) != 0; }

int Connection::fd() const { return ssh_get_fd(session_); }

std::unique_ptr<Connection> Pool::take(const Target& target) {
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(idle_.begin(), idle_.end(),
                           [&](const auto& c) { return c->target().key() == target.key(); });
    while (it != idle_.end()) {
      auto c = std::move(*it);
      idle_.erase(it);
      if (c->alive()) return c;
      it = std::find_if(idle_.begin(), idle_.end(),
                        [&](const auto& k) { return k->target().key() == target.key(); });
    }
  }
  return std::make_unique<Connection>(target);
}

void Pool::give(std::unique_ptr<Connection> connection) {
  if (!connection || !connection->alive()) return;
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(connection));
}

}  // namespace cordon::ssh
