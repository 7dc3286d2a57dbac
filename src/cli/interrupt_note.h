// What a long command says when Ctrl-C (SIGINT) or SIGTERM stops it: how much of its work is kept
// and how to go on. While an InterruptNote is alive, either signal first writes
// "<prefix><count><suffix>" to stderr (write(2) only, the count formatted in the handler), then
// takes its previous action (by default: terminate, so the shell still sees the signal). A
// signal the caller ignored stays ignored. One note at a time; a CleanupOnSignal made while it is
// alive runs first and hands the signal on to it (core/signal_cleanup.h).
#pragma once

#include <signal.h>

#include <memory>
#include <string>

namespace mfabric::cli {

class InterruptNote {
 public:
  InterruptNote(std::string prefix, std::string suffix);
  ~InterruptNote();
  InterruptNote(const InterruptNote&) = delete;
  InterruptNote& operator=(const InterruptNote&) = delete;

  // The count the note prints from now on (any thread).
  void set_count(long count);

  // The note of a command that journals its `total` runs (unit "runs", "points") in `journal`
  // (empty: none) as they finish, `what` naming the command ("a comparison", "a sweep"):
  // "mfabric: stopped after 5 of 32 runs; DIR/points.jsonl keeps the ones that finished, and
  // the same command runs only the others", or that nothing was kept and how to keep it.
  static std::unique_ptr<InterruptNote> for_journal(const char* what, const char* unit, int total,
                                                    const std::string& journal);

 private:
  std::string prefix_;
  std::string suffix_;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  bool int_installed_ = false;
  bool term_installed_ = false;
};

}  // namespace mfabric::cli
