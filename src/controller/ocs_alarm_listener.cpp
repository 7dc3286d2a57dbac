#include "controller/ocs_alarm_listener.h"

#include <chrono>

namespace mfabric::controller {

OcsAlarmListener::OcsAlarmListener(std::unique_ptr<tl1::Tl1Client> session, Callback on_alarm,
                                   Time poll, Time retry_delay)
    : session_(std::move(session)),
      on_alarm_(std::move(on_alarm)),
      poll_(poll),
      retry_delay_(retry_delay) {
  if (!session_) throw Error("OCS alarm listener: no session");
  thread_ = std::thread([this] { run(); });
}

OcsAlarmListener::~OcsAlarmListener() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void OcsAlarmListener::run() {
  const auto pause = [&] {
    // In steps of the poll, so that stopping is never held up by the retry delay.
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(retry_delay_.ps() / 1000);
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
          std::chrono::nanoseconds(poll_.ps() / 1000), std::chrono::milliseconds(50)));
    }
  };
  bool was_connected = false;
  while (!stop_) {
    try {
      if (!session_->connected()) {
        session_->connect();
        if (was_connected) ++reconnects_;
        was_connected = true;
        listening_ = true;
      }
      const auto alarm = session_->await_autonomous(poll_);
      if (alarm) {
        ++alarms_;
        on_alarm_(*alarm);
      }
    } catch (const Error&) {
      listening_ = false;
      // The OCS is down or refused the login: the controller's own session reports that; keep
      // trying to listen.
      pause();
    }
  }
}

}  // namespace mfabric::controller
