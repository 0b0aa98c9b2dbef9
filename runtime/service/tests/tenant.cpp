// A tenant process for the service tests: `tenant SOCKET NAME` registers
// one fake kernel that never finishes and serves until killed, printing
// "ready" once connected; `tenant SOCKET --garbage` sends malformed and
// hostile lines, prints every reply and exits.
#include "locked_kernel.hpp"
#include "smpart/service.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace std::chrono_literals;

static std::vector<unsigned> ids() {
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 12; ++I)
    Ids.push_back(I * 2); // not dense, like real %smid values
  return Ids;
}

static int garbage(const char *Path) {
  int Fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un A{};
  A.sun_family = AF_UNIX;
  std::strncpy(A.sun_path, Path, sizeof A.sun_path - 1);
  if (::connect(Fd, reinterpret_cast<sockaddr *>(&A), sizeof A) != 0)
    return 1;
  const std::string Lines =
      std::string("{\"type\":\"hello\",\"protocol\":\"") +
      smpart::service::kProtocol +
      "\",\"sm_ids\":[0,2,4,6]}\n"
      "not json at all\n"
      "[1,2,3]\n"
      "{\"type\":\"arrive\",\"kernel\":-1}\n"
      "{\"type\":\"knobs\",\"kernel\":1,\"op\":\"mask\",\"sms\":[0]}\n"
      "{\"type\":\"progress\",\"kernel\":99,\"taken\":1,\"done\":1}\n"
      "{\"type\":\"arrive\",\"kernel\":7,\"name\":\"g\",\"total\":\"many\","
      "\"occupancy\":1}\n";
  [[maybe_unused]] ssize_t W = ::write(Fd, Lines.data(), Lines.size());
  std::this_thread::sleep_for(200ms);
  char Buf[8192];
  ssize_t N = ::recv(Fd, Buf, sizeof Buf - 1, MSG_DONTWAIT);
  if (N > 0) {
    Buf[N] = 0;
    std::fputs(Buf, stdout);
    std::fflush(stdout);
  }
  // Then one line longer than the service accepts.
  std::string Huge(smpart::service::kMaxLine + 10, 'x');
  W = ::send(Fd, Huge.data(), Huge.size(), MSG_NOSIGNAL);
  std::this_thread::sleep_for(100ms);
  ::close(Fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  if (!std::strcmp(argv[2], "--garbage"))
    return garbage(argv[1]);
  smpart::service::Client C(argv[1], ids());
  auto K = std::make_shared<smpart::testing::LockedKernel>(1, argv[2],
                                                           1ull << 40, ids());
  C.arrive(K);
  while (!C.connected())
    std::this_thread::sleep_for(1ms);
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;)
    std::this_thread::sleep_for(1s);
}
