// What a long command says when Ctrl-C (SIGINT) or SIGTERM stops it: how much of its work is kept
// and how to go on. While an InterruptNote is alive, either signal first writes
// "<prefix><count><suffix>" to stderr (write(2) only, the count formatted in the handler), then
// takes its previous action (by default: terminate, so the shell still sees the signal). A
// signal the caller ignored stays ignored. One note at a time; a CleanupOnSignal made while it is
// alive runs first and hands the signal on to it (core/signal_cleanup.h).
#pragma once

#include <signal.h>

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

 private:
  std::string prefix_;
  std::string suffix_;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  bool int_installed_ = false;
  bool term_installed_ = false;
};

}  // namespace mfabric::cli
