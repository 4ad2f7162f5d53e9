// The handler only touches lock-free atomics (StopToken::request is async-signal-safe).
#include "stop_signals.hpp"

#include <cordon/sdk/child.hpp>

#include <signal.h>

#include <atomic>
#include <cstring>

namespace cordon::cli {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<StopToken*> g_token{nullptr};
std::atomic<int> g_received{0};
std::atomic<bool> g_term_terminates{false};
struct sigaction g_old[3];

void on_signal(int sig) {
  int none = 0;
  g_received.compare_exchange_strong(none, sig);
  bool gentle = sig == SIGTERM && g_term_terminates.load();
  if (StopToken* token = g_token.load())
    token->request(gentle ? StopToken::Level::terminate : StopToken::Level::kill);
}

}  // namespace

StopOnSignals::StopOnSignals(std::shared_ptr<StopToken> token, bool term_terminates)
    : token_(std::move(token)) {
  g_received = 0;
  g_term_terminates = term_terminates;
  g_token = token_.get();
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &g_old[i]);
}

StopOnSignals::~StopOnSignals() {
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_old[i], nullptr);
  g_token = nullptr;
}

int StopOnSignals::received() const noexcept { return g_received.load(); }

void default_child_signal() noexcept {
  if (!sdk::children_not_waitable()) return;
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGCHLD, &dfl, nullptr);
}

}  // namespace cordon::cli
