// What the tests of smpartd share: the SM ids of their fake GPU, a bounded
// wait for events, a socket path per test and a service on its own thread.
#pragma once

#include "smpart/service.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace smpart::testing {

/// 12 SMs with even ids.
inline std::vector<unsigned> ids() {
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 12; ++I)
    Ids.push_back(I * 2);
  return Ids;
}

/// Waits up to 10 s for \p Cond (events, not performance).
inline bool eventually(const std::function<bool()> &Cond) {
  for (int I = 0; I < 2000; ++I) {
    if (Cond())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Cond();
}

/// A socket of this process named \p Name: tests running at once (several
/// ctest processes) never share one.
inline std::string socketPath(const std::string &Name) {
  return "/tmp/smpart-test-" + std::to_string(::getpid()) + "-" + Name +
         ".sock";
}

/// A client socket connected to the service at \p Path.
inline int connectTo(const std::string &Path) {
  const int Fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un A{};
  A.sun_family = AF_UNIX;
  std::strncpy(A.sun_path, Path.c_str(), sizeof A.sun_path - 1);
  EXPECT_EQ(::connect(Fd, reinterpret_cast<sockaddr *>(&A), sizeof A), 0);
  return Fd;
}

/// A service on its own thread, quiet, until shut() or destroyed.
struct Running {
  explicit Running(const std::string &Path, std::string Policy = "even",
                   std::vector<unsigned> SmIds = {})
      : Running([&] {
          service::ServerOptions O;
          O.socket = Path;
          O.policy = std::move(Policy);
          O.sm_ids = std::move(SmIds);
          return O;
        }()) {}
  explicit Running(service::ServerOptions O) {
    O.log = [](const std::string &) {};
    std::string Error;
    S = service::Server::open(O, &Error);
    EXPECT_TRUE(S) << Error;
    if (S)
      T = std::thread([this] { S->run(); });
  }
  ~Running() { shut(); }
  void shut() {
    if (!S)
      return;
    S->stop();
    T.join();
    S.reset();
  }
  std::unique_ptr<service::Server> S;
  std::thread T;
};

} // namespace smpart::testing
