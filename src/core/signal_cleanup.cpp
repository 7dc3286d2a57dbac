#include "core/signal_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <stdexcept>

namespace mfabric {
namespace {

constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};

// What the handler reads. Published before the handlers are installed and withdrawn after they
// are restored; the handler only reads it (no allocation, no locks).
std::atomic<const std::vector<CleanupOnSignal::Step>*> g_steps{nullptr};
std::array<struct sigaction, kSignals.size()> g_previous{};
std::array<bool, kSignals.size()> g_installed{};

extern "C" void run_cleanup_and_reraise(int sig) {
  const int saved_errno = errno;
  if (const auto* steps = g_steps.load()) {
    for (const CleanupOnSignal::Step& s : *steps) {
      switch (s.op) {
        case CleanupOnSignal::Op::Unlink:
          ::unlink(s.path.c_str());
          break;
        case CleanupOnSignal::Op::Rmdir:
          ::rmdir(s.path.c_str());
          break;
        case CleanupOnSignal::Op::Rename:
          ::rename(s.path.c_str(), s.to.c_str());
          break;
      }
    }
  }
  // The previous action (the default: terminate) takes over; the signal is blocked while this
  // handler runs, so it is delivered again as soon as the handler returns.
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  }
  errno = saved_errno;
  ::raise(sig);
}

}  // namespace

CleanupOnSignal::CleanupOnSignal(std::vector<Step> steps) : steps_(std::move(steps)) {
  const std::vector<Step>* expected = nullptr;
  if (!g_steps.compare_exchange_strong(expected, &steps_)) {
    throw std::logic_error("CleanupOnSignal: another guard is already active");
  }
  struct sigaction action {};
  action.sa_handler = run_cleanup_and_reraise;
  sigemptyset(&action.sa_mask);
  for (int s : kSignals)
    sigaddset(&action.sa_mask, s);  // one cleanup at a time, even for two different signals
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    g_installed[i] = false;
    if (::sigaction(kSignals[i], nullptr, &g_previous[i]) != 0) continue;
    // A signal the caller chose to ignore (nohup, a background job) stays ignored.
    if (g_previous[i].sa_handler == SIG_IGN) continue;
    g_installed[i] = ::sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

CleanupOnSignal::~CleanupOnSignal() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    if (g_installed[i]) ::sigaction(kSignals[i], &g_previous[i], nullptr);
  }
  g_steps.store(nullptr);
}

}  // namespace mfabric
