#include "cli/interrupt_note.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <stdexcept>

#include "core/output_text.h"

namespace mfabric::cli {
namespace {

// What the handler reads: published before the handlers are installed, withdrawn after they are
// restored; the handler only reads (no allocation, no locks).
std::atomic<const std::string*> g_prefix{nullptr};
std::atomic<const std::string*> g_suffix{nullptr};
std::atomic<long> g_count{0};
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

void write_all(const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, data, size);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

extern "C" void write_note_and_reraise(int sig) {
  const int saved_errno = errno;
  const std::string* prefix = g_prefix.load();
  const std::string* suffix = g_suffix.load();
  if (prefix != nullptr && suffix != nullptr) {
    write_all(prefix->data(), prefix->size());
    // The count in decimal, without the library (not async-signal-safe).
    char digits[24];
    std::size_t at = sizeof digits;
    long n = g_count.load();
    if (n < 0) n = 0;
    do {
      digits[--at] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0 && at > 0);
    write_all(digits + at, sizeof digits - at);
    write_all(suffix->data(), suffix->size());
  }
  // The previous action takes over; the signal is blocked while this handler runs, so it is
  // delivered again as soon as the handler returns.
  ::sigaction(sig, sig == SIGINT ? &g_previous_int : &g_previous_term, nullptr);
  errno = saved_errno;
  ::raise(sig);
}

}  // namespace

InterruptNote::InterruptNote(std::string prefix, std::string suffix)
    : prefix_(std::move(prefix)), suffix_(std::move(suffix)) {
  const std::string* expected = nullptr;
  if (!g_prefix.compare_exchange_strong(expected, &prefix_))
    throw std::logic_error("InterruptNote: another note is already active");
  g_suffix.store(&suffix_);
  g_count.store(0);
  struct sigaction action {};
  action.sa_handler = write_note_and_reraise;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_flags = SA_RESTART;
  if (::sigaction(SIGINT, nullptr, &previous_int_) == 0 && previous_int_.sa_handler != SIG_IGN) {
    g_previous_int = previous_int_;
    int_installed_ = ::sigaction(SIGINT, &action, nullptr) == 0;
  }
  if (::sigaction(SIGTERM, nullptr, &previous_term_) == 0 && previous_term_.sa_handler != SIG_IGN) {
    g_previous_term = previous_term_;
    term_installed_ = ::sigaction(SIGTERM, &action, nullptr) == 0;
  }
}

InterruptNote::~InterruptNote() {
  if (int_installed_) ::sigaction(SIGINT, &previous_int_, nullptr);
  if (term_installed_) ::sigaction(SIGTERM, &previous_term_, nullptr);
  g_suffix.store(nullptr);
  g_prefix.store(nullptr);
}

void InterruptNote::set_count(long count) {
  g_count.store(count);
}

std::unique_ptr<InterruptNote> InterruptNote::for_journal(const char* what, const char* unit,
                                                          int total, const std::string& journal) {
  return std::make_unique<InterruptNote>(
      "\nmfabric: stopped after ",
      journal.empty()
          ? fmt::format(" of {} {}; nothing was kept (with --out DIR {} keeps each as it "
                        "finishes, and the same command resumes it)\n",
                        total, unit, what)
          : fmt::format(" of {} {}; {} keeps the ones that finished, and the same command runs "
                        "only the others\n",
                        total, unit, printable(journal)));
}

}  // namespace mfabric::cli
