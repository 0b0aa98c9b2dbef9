// smpartd: plans the kernels of several processes with one controller.
//
//   smpartd --socket PATH [--policy NAME] [--profiles FILE] [--trace FILE]
//           [--sm-ids 0,2,4,...] [--epoch-us US] [--mode 0600]
//           [--allow-uid UID]...
//
// Tenants join with SMPART_SERVICE=PATH (no code change). SIGTERM or
// SIGINT stops it and removes the socket. Bad usage: exit 2; a service
// that cannot start (socket, profiles, trace): exit 1.
#include "command_line.hpp"
#include "online_policies.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/service.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace {
smpart::service::Server *Running = nullptr;
extern "C" void onSignal(int) {
  if (Running)
    Running->stop();
}

// The help, around the list of policy names.
const char *HelpHead =
    R"(OVERVIEW: smpartd: plans the kernels of several processes with one controller

USAGE:
  smpartd --socket PATH [--policy NAME] [--profiles FILE] [--trace FILE]
          [--sm-ids 0,2,...] [--epoch-us US] [--mode 0600]
          [--allow-uid UID]...
  smpartd --help | --version

Processes that set SMPART_SERVICE=PATH send their launches to this service,
which runs one controller (and one policy) for all of them. SIGTERM or
SIGINT stops it and removes the socket.

OPTIONS:
  --socket PATH      Unix socket to listen on (required)
  --policy NAME      allocation policy (default even): the offline ones,
                     then the online ones, which also act every epoch on
                     what the tenants' kernels show:
                     )";
const char *HelpTail = R"(
  --profiles FILE    profile file (smpart.profiles/1); every policy but
                     even needs one
  --trace FILE       write an smpart trace of every decision
  --sm-ids LIST      comma-separated SM ids the tenants may use, distinct,
                     each 0 to 511 (default: those the first tenant
                     reports)
  --epoch-us US      close an epoch of measurement every US microseconds
                     while tenants have kernels, 100 to 10000000 (1000)
  --mode MODE        octal permissions of the socket, at most 0777 (0600)
  --allow-uid UID    also accept tenants of this user id (repeatable)
  --help             print this help
  --version          print smpartd's version and protocol

Options take their value as `--name VALUE` or `--name=VALUE`.

EXIT STATUS:
  0  stopped by SIGTERM or SIGINT
  1  the service could not start (socket, profiles, trace)
  2  bad usage: unknown option, bad or missing value (an error line and
     "see 'smpartd --help'")
)";

/// Offline policies, then the online ones.
std::string policyNames() {
  std::string Names;
  for (const smpart::policy::Policy *P : smpart::policy::allPolicies())
    Names += (Names.empty() ? "" : ", ") + std::string(P->name());
  for (const smpart::online::OnlinePolicyInfo &I :
       smpart::online::onlinePolicies())
    Names += ", " + std::string(I.name);
  return Names;
}

/// The names for the help: wrapped at 79 columns under the option's text.
std::string wrappedNames() {
  const std::string Indent(21, ' ');
  std::string Out, Line;
  std::string Names = policyNames() + ",";
  for (std::size_t At = 0; At < Names.size();) {
    std::size_t Comma = Names.find(',', At);
    std::string Word = Names.substr(At, Comma + 1 - At);
    if (!Word.empty() && Word[0] == ' ')
      Word.erase(0, 1);
    if (!Line.empty() && Indent.size() + Line.size() + 1 + Word.size() > 79) {
      Out += Line + "\n" + Indent;
      Line.clear();
    }
    Line += (Line.empty() ? "" : " ") + Word;
    At = Comma + 1;
  }
  Line.pop_back(); // the last comma
  return Out + Line;
}

/// Digits only: strtoul alone would take " 1", "+1" and "-1".
bool number(const std::string &S, unsigned long &Out, int Base = 10) {
  if (S.empty() || S.find_first_not_of(Base == 8 ? "01234567" : "0123456789") !=
                       std::string::npos)
    return false;
  errno = 0;
  Out = std::strtoul(S.c_str(), nullptr, Base);
  return !errno;
}
} // namespace

int main(int argc, char **argv) {
  smpart::cli::CommandLine CL("smpartd", HelpHead + wrappedNames() + HelpTail,
                              std::string(" (protocol ") +
                                  smpart::service::kProtocol + ")");
  smpart::service::ServerOptions O;
  CL.option("--socket", [&](const std::string &V) { O.socket = V; });
  CL.option("--policy", [&](const std::string &V) {
    if (!smpart::policy::findPolicy(V) && !smpart::online::findOnlinePolicy(V))
      CL.usageError("--policy: unknown policy '" + V + "'; expected one of " +
                    policyNames());
    O.policy = V;
  });
  CL.option("--profiles", [&](const std::string &V) { O.profiles = V; });
  CL.option("--trace", [&](const std::string &V) { O.trace = V; });
  CL.option("--epoch-us", [&](const std::string &V) {
    char *End = nullptr;
    const double Us = std::strtod(V.c_str(), &End);
    if (V.empty() || *End || !(Us >= smpart::MinEpochUs && Us <= 1e7))
      CL.usageError("--epoch-us: expected microseconds, 100 to 10000000, "
                    "got '" +
                    V + "'");
    O.epoch_us = Us;
  });
  CL.option("--mode", [&](const std::string &V) {
    unsigned long N = 0;
    if (!number(V, N, 8) || N > 0777)
      CL.usageError("--mode: expected octal permissions 0 to 0777, got '" + V +
                    "'");
    O.mode = static_cast<unsigned>(N);
  });
  CL.option("--allow-uid", [&](const std::string &V) {
    unsigned long N = 0;
    if (!number(V, N) ||
        N >= static_cast<unsigned long>(static_cast<uid_t>(-1)))
      CL.usageError("--allow-uid: expected a user id, got '" + V + "'");
    O.allow_uids.push_back(static_cast<uid_t>(N));
  });
  CL.option("--sm-ids", [&](const std::string &V) {
    // The same check as hello's sm_ids (docs/service.md).
    std::stringstream S(V);
    std::string Item;
    O.sm_ids.clear();
    while (std::getline(S, Item, ',')) {
      unsigned long N = 0;
      if (!number(Item, N))
        CL.usageError("--sm-ids: expected an SM id (0 to " +
                      std::to_string(smpart::kMaxSms - 1) + "), got '" + Item +
                      "'");
      const std::string Bad = smpart::service::smIdError(N, O.sm_ids);
      if (!Bad.empty())
        CL.usageError("--sm-ids: " + Bad);
      O.sm_ids.push_back(static_cast<unsigned>(N));
    }
    if (O.sm_ids.empty() || V.back() == ',')
      CL.usageError("--sm-ids: expected a comma-separated list of SM ids, "
                    "got '" +
                    V + "'");
  });
  CL.parse(argc, argv);
  if (O.socket.empty())
    CL.usageError("--socket PATH is required");
  if (O.profiles.empty() && O.policy != "even")
    CL.usageError("--policy " + O.policy + " needs --profiles FILE");
  std::string Error;
  auto Server = smpart::service::Server::open(O, &Error);
  if (!Server)
    return CL.fail(Error);
  Running = Server.get();
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);
  std::signal(SIGPIPE, SIG_IGN);
  std::fprintf(stderr, "smpartd: serving %s (%s)\n", O.socket.c_str(),
               O.policy.c_str());
  Server->run();
  Running = nullptr;
  return smpart::cli::ExitSuccess;
}
