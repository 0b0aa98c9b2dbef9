// smpartd: plans the kernels of several processes with one controller.
//
//   smpartd --socket PATH [--policy NAME] [--profiles FILE] [--trace FILE]
//           [--sm-ids 0,2,4,...] [--mode 0600] [--allow-uid UID]...
//
// Tenants join with SMPART_SERVICE=PATH (no code change). SIGTERM or
// SIGINT stops it and removes the socket. Errors: one line, exit 2.
#include "smpart/service.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

namespace {
smpart::service::Server *Running = nullptr;
extern "C" void onSignal(int) {
  if (Running)
    Running->stop();
}
int usage() {
  std::fprintf(stderr,
               "usage: smpartd --socket PATH [--policy NAME] [--profiles FILE] "
               "[--trace FILE] [--sm-ids 0,2,...] [--mode 0600] "
               "[--allow-uid UID]...\n");
  return 2;
}
bool number(const char *S, unsigned long &Out, int Base = 10) {
  char *End = nullptr;
  errno = 0;
  Out = std::strtoul(S, &End, Base);
  return *S && !*End && !errno;
}
} // namespace

int main(int argc, char **argv) {
  smpart::service::ServerOptions O;
  for (int I = 1; I < argc; ++I) {
    const std::string A = argv[I];
    if (A == "--version") {
      std::printf("smpartd version %s (protocol %s)\n", SMPART_VERSION,
                  smpart::service::kProtocol);
      return 0;
    }
    if (I + 1 >= argc)
      return usage();
    const char *V = argv[++I];
    unsigned long N = 0;
    if (A == "--socket") {
      O.socket = V;
    } else if (A == "--policy") {
      O.policy = V;
    } else if (A == "--profiles") {
      O.profiles = V;
    } else if (A == "--trace") {
      O.trace = V;
    } else if (A == "--mode" && number(V, N, 8) && N <= 0777) {
      O.mode = static_cast<unsigned>(N);
    } else if (A == "--allow-uid" && number(V, N)) {
      O.allow_uids.push_back(static_cast<uid_t>(N));
    } else if (A == "--sm-ids") {
      std::stringstream S(V);
      std::string Item;
      while (std::getline(S, Item, ','))
        if (number(Item.c_str(), N) && N < 4096)
          O.sm_ids.push_back(static_cast<unsigned>(N));
        else
          return std::fprintf(stderr,
                              "smpartd: --sm-ids: '%s' is not an SM id\n",
                              Item.c_str()),
                 2;
    } else {
      return usage();
    }
  }
  if (O.socket.empty())
    return usage();
  std::string Error;
  auto Server = smpart::service::Server::open(O, &Error);
  if (!Server) {
    std::fprintf(stderr, "smpartd: %s\n", Error.c_str());
    return 2;
  }
  Running = Server.get();
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);
  std::signal(SIGPIPE, SIG_IGN);
  std::fprintf(stderr, "smpartd: serving %s (%s)\n", O.socket.c_str(),
               O.policy.c_str());
  Server->run();
  Running = nullptr;
  return 0;
}
