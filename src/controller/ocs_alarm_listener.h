// The OCS's alarms, listened for (docs/runtime.md, "Region controller"): a TL1 session of its own,
// logged in and only reading, that calls back on every autonomous message the OCS sends (a port
// that lost light, was repaired, any event), so that the controller reads the OCS back at once
// instead of at the next submit. The dialect of the alarm does not matter: any autonomous message
// is a reason to read the switch back.
//
// A thread of its own; the session reconnects (after `retry_delay`) whenever it breaks or cannot
// open, for as long as the listener lives. Stopping (the destructor) takes at most `poll` plus
// one connection attempt.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/units.h"
#include "tl1/tl1_client.h"

namespace mfabric::controller {

class OcsAlarmListener {
 public:
  using Callback = std::function<void(const tl1::Tl1AutonomousMessage&)>;
  // Starts listening on `session` (its own, not the controller's command session); `on_alarm`
  // runs on the listener's thread.
  OcsAlarmListener(std::unique_ptr<tl1::Tl1Client> session, Callback on_alarm,
                   Time poll = Time::milliseconds(200),
                   Time retry_delay = Time::milliseconds(1000));
  ~OcsAlarmListener();
  OcsAlarmListener(const OcsAlarmListener&) = delete;
  OcsAlarmListener& operator=(const OcsAlarmListener&) = delete;

  bool listening() const { return listening_.load(); }    // logged in and reading now
  std::int64_t alarms() const { return alarms_.load(); }  // messages passed to on_alarm
  std::int64_t reconnects() const { return reconnects_.load(); }

 private:
  void run();

  std::unique_ptr<tl1::Tl1Client> session_;
  Callback on_alarm_;
  Time poll_;
  Time retry_delay_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> listening_{false};
  std::atomic<std::int64_t> alarms_{0};
  std::atomic<std::int64_t> reconnects_{0};
  std::thread thread_;
};

}  // namespace mfabric::controller
