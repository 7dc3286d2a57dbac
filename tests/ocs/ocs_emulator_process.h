// Binaries that serve on a port (`mfabric ocs-emulator`, `mfabric controller`) as child
// processes, for tests of what talks to them: started listening on a free loopback port (or a
// given one, to restart one where a client expects it), the address read from the first line they
// print ("listening on HOST:PORT"), killed when the test ends. They are given --max-time 20s, so
// that a failing test cannot leave them behind.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace mfabric::testing {

class ListeningChild {
 public:
  // Runs MFABRIC_BINARY with `arguments` (its own name not included).
  explicit ListeningChild(const std::vector<std::string>& arguments) {
    std::vector<std::string> argv_text{MFABRIC_BINARY};
    argv_text.insert(argv_text.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      ::execv(MFABRIC_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    // Read byte by byte, with a deadline.
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char c = 0;
      if (::read(out[0], &c, 1) != 1 || c == '\n') break;
      line += c;
    }
    ::close(out[0]);
    const std::string prefix = "listening on ";
    if (line.rfind(prefix, 0) != 0) {
      stop(SIGKILL);
      throw std::runtime_error(arguments.front() + " said '" + line + "'");
    }
    address_ = line.substr(prefix.size());
  }
  ~ListeningChild() { stop(SIGKILL); }
  ListeningChild(const ListeningChild&) = delete;
  ListeningChild& operator=(const ListeningChild&) = delete;

  // Sends `signal` and waits; returns the wait status.
  int stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  const std::string& address() const { return address_; }

 private:
  pid_t pid_ = -1;
  std::string address_;
};

// `mfabric ocs-emulator` on a state file.
class OcsEmulatorChild : public ListeningChild {
 public:
  OcsEmulatorChild(const std::string& state, const std::string& switching, int ports,
                   const std::string& listen = "127.0.0.1:0")
      : ListeningChild({"ocs-emulator", "--ports", std::to_string(ports), "--switching", switching,
                        "--state", state, "--listen", listen, "--max-time", "20s", "-q"}) {}
};

}  // namespace mfabric::testing
