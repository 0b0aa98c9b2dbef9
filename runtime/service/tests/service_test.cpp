// smpartd's service and client: tenants in this process and in real
// processes (tests/tenant.cpp), one that crashes and one that sends
// garbage; the service survives, cleans up, keeps tenants' SM sets
// disjoint and picks tenants up again after a restart.
#include "locked_kernel.hpp"
#include "running_service.hpp"
#include "smpart/service.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace smpart;
using namespace std::chrono_literals;
using smpart::testing::eventually;
using smpart::testing::ids;
using smpart::testing::LockedKernel;
using smpart::testing::Running;
using smpart::testing::socketPath;

namespace {

bool disjoint(const std::vector<KernelAllocation> &A) {
  for (std::size_t I = 0; I < A.size(); ++I)
    for (std::size_t J = I + 1; J < A.size(); ++J)
      if ((A[I].mask & A[J].mask).any())
        return false;
  return true;
}

/// A tenant process (tests/tenant.cpp); waits until it printed "ready".
struct Tenant {
  Tenant(const std::string &Path, const char *Arg) {
    int Out[2];
    EXPECT_EQ(::pipe(Out), 0);
    Pid = ::fork();
    if (Pid == 0) {
      ::dup2(Out[1], 1);
      ::execl(SMPART_TENANT, SMPART_TENANT, Path.c_str(), Arg, nullptr);
      ::_exit(127);
    }
    ::close(Out[1]);
    Read = ::fdopen(Out[0], "r");
  }
  std::string output() {
    std::string S;
    char Buf[256];
    while (std::fgets(Buf, sizeof Buf, Read))
      S += Buf;
    return S;
  }
  bool ready() {
    char Buf[64] = {0};
    return std::fgets(Buf, sizeof Buf, Read) && std::string(Buf) == "ready\n";
  }
  int kill(int Sig) {
    ::kill(Pid, Sig);
    int St = 0;
    ::waitpid(Pid, &St, 0);
    return St;
  }
  int wait() {
    int St = 0;
    ::waitpid(Pid, &St, 0);
    return St;
  }
  ~Tenant() {
    if (Read)
      std::fclose(Read);
  }
  pid_t Pid = -1;
  FILE *Read = nullptr;
};

/// A tenant speaking the protocol by hand: sends lines, reads the replies
/// one line at a time and sees the service close the connection.
struct RawTenant {
  explicit RawTenant(const std::string &Path) {
    Fd = smpart::testing::connectTo(Path);
  }
  /// A connection made elsewhere (\p Fd).
  explicit RawTenant(int Fd) : Fd(Fd) {}
  ~RawTenant() { ::close(Fd); }
  void send(const std::string &Line) {
    const std::string L = Line + "\n";
    EXPECT_EQ(::send(Fd, L.data(), L.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(L.size()));
  }
  /// The next line the service sent; "" once it closed the connection (or
  /// after 10 s of silence).
  std::string line() {
    for (;;) {
      if (auto Eol = In.find('\n'); Eol != std::string::npos) {
        std::string L = In.substr(0, Eol);
        In.erase(0, Eol + 1);
        return L;
      }
      pollfd P{Fd, POLLIN, 0};
      if (::poll(&P, 1, 10000) <= 0)
        return "";
      char Buf[4096];
      const ssize_t N = ::recv(Fd, Buf, sizeof Buf, 0);
      if (N <= 0)
        return "";
      In.append(Buf, static_cast<std::size_t>(N));
    }
  }
  /// The service closed the connection (after the lines still unread).
  bool closed() {
    while (!line().empty()) {
    }
    char C;
    return ::recv(Fd, &C, 1, MSG_DONTWAIT) == 0;
  }
  void hello(const std::string &SmIds = "[0,2,4,6]") {
    send(std::string("{\"type\":\"hello\",\"protocol\":\"") +
         service::kProtocol + "\",\"pid\":1,\"sm_ids\":" + SmIds + "}");
  }
  int Fd = -1;
  std::string In;
};

/// A stand-in for the service: listens on \p Name's socket path and
/// accepts the client's connections, to speak to a service::Client.
struct FakeService {
  explicit FakeService(const std::string &Name) : Path(socketPath(Name)) {
    ::unlink(Path.c_str());
    Listen = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un A{};
    A.sun_family = AF_UNIX;
    std::strncpy(A.sun_path, Path.c_str(), sizeof A.sun_path - 1);
    EXPECT_EQ(::bind(Listen, reinterpret_cast<sockaddr *>(&A), sizeof A), 0);
    EXPECT_EQ(::listen(Listen, 1), 0);
  }
  ~FakeService() {
    ::close(Listen);
    ::unlink(Path.c_str());
  }
  /// The next connection of a client (-1 after 10 s without one).
  int accept() {
    pollfd P{Listen, POLLIN, 0};
    return ::poll(&P, 1, 10000) > 0 ? ::accept(Listen, nullptr, nullptr) : -1;
  }
  std::string Path;
  int Listen = -1;
};

/// \p Line is an `error` line whose message holds \p Text.
::testing::AssertionResult isError(const std::string &Line,
                                   const std::string &Text) {
  if (Line.find("\"type\":\"error\"") != std::string::npos &&
      Line.find(Text) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected an error with '" << Text << "', got '" << Line << "'";
}

TEST(ServiceProtocol, UnknownTypeIsNamedWithTheValidOnes) {
  const std::string Path = socketPath("unknown");
  Running R(Path);
  RawTenant T(Path);
  T.hello();
  EXPECT_NE(T.line().find("\"welcome\""), std::string::npos);
  const char *Valid = "expected one of arrive, progress, last_block, "
                      "applied, depart";
  T.send("{\"type\":\"x\"}");
  EXPECT_TRUE(isError(T.line(), "unknown message type 'x'"));
  T.send("{\"type\":\"bogus\",\"kernel\":1}");
  const std::string L = T.line();
  EXPECT_TRUE(isError(L, "unknown message type 'bogus'"));
  EXPECT_NE(L.find(Valid), std::string::npos) << L;
  // The connection is still served.
  T.send("{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\",\"total\":10,"
         "\"occupancy\":2}");
  EXPECT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
}

TEST(ServiceProtocol, SecondHelloGetsItsOwnError) {
  const std::string Path = socketPath("hello2");
  Running R(Path);
  RawTenant T(Path);
  T.hello();
  EXPECT_NE(T.line().find("\"welcome\""), std::string::npos);
  T.hello();
  EXPECT_TRUE(isError(T.line(), "hello: already received on this connection"));
  T.send("{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\",\"total\":10,"
         "\"occupancy\":2}");
  EXPECT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
}

TEST(ServiceProtocol, InvalidSmIdsSayWhatIsInvalid) {
  const std::string Path = socketPath("smids");
  Running R(Path); // no --sm-ids: the hello's decide
  const std::pair<const char *, const char *> Cases[] = {
      {"\"all\"",
       "hello: sm_ids: expected an array of SM ids, got \\\"all\\\""},
      {"[0,2,-1]", "hello: sm_ids[2]: expected an SM id (0 to 511), got -1"},
      {"[0,2,512]", "hello: sm_ids[2]: expected an SM id (0 to 511), got 512"},
      {"[0,\"2\"]",
       "hello: sm_ids[1]: expected an SM id (0 to 511), got \\\"2\\\""},
      {"[0,1.5]", "hello: sm_ids[1]: expected an SM id (0 to 511), got 1.5"},
      {"[4,6,4]", "hello: sm_ids[2]: SM 4 is listed twice"},
      {"[]", "hello: sm_ids: empty"},
  };
  for (const auto &[Ids, Message] : Cases) {
    RawTenant T(Path);
    T.hello(Ids);
    const std::string L = T.line();
    EXPECT_TRUE(isError(L, Message));
    EXPECT_EQ(L.find("no SM ids"), std::string::npos) << L;
    EXPECT_TRUE(T.closed()) << Ids;
  }
  // Without sm_ids and without --sm-ids there is nothing to plan on.
  RawTenant T(Path);
  T.send(std::string("{\"type\":\"hello\",\"protocol\":\"") +
         service::kProtocol + "\"}");
  EXPECT_TRUE(
      isError(T.line(), "no SM ids: give --sm-ids to smpartd or sm_ids"));
  EXPECT_TRUE(T.closed());
  EXPECT_TRUE(R.S->allocations().empty());
}

TEST(ServiceProtocol, HelloWhoseSmIdsMissTheServiceOnesIsRefused) {
  // Planned on SMs the tenant does not have, its kernels would get no SM.
  const std::string Path = socketPath("miss");
  Running R(Path, "even", {0, 1, 2, 3});
  {
    RawTenant T(Path);
    T.hello("[8,9]");
    EXPECT_TRUE(isError(T.line(), "hello: sm_ids: none of the tenant's SMs "
                                  "is among the service's (0, 1, 2, 3)"));
    EXPECT_TRUE(T.closed());
  }
  // Without --sm-ids the first hello's SMs are the service's.
  const std::string Path2 = socketPath("miss2");
  Running R2(Path2);
  RawTenant First(Path2);
  First.hello("[0,2]");
  EXPECT_NE(First.line().find("\"welcome\""), std::string::npos);
  RawTenant Second(Path2);
  Second.hello("[5]");
  EXPECT_TRUE(isError(Second.line(), "hello: sm_ids: none of the tenant's "
                                     "SMs is among the service's (0, 2)"));
  EXPECT_TRUE(Second.closed());
  // An overlapping set is welcome.
  RawTenant Third(Path2);
  Third.hello("[2,3]");
  EXPECT_NE(Third.line().find("\"welcome\""), std::string::npos);
}

TEST(ServiceProtocol, ErrorsNameTheMessageTypeAndTheField) {
  const std::string Path = socketPath("fields");
  Running R(Path);
  RawTenant T(Path);
  T.hello();
  EXPECT_NE(T.line().find("\"welcome\""), std::string::npos);
  const std::string LongName = "{\"type\":\"arrive\",\"kernel\":1,\"name\":\"" +
                               std::string(5000, 'k') +
                               "\",\"total\":1,\"occupancy\":2}";
  const char *NameError =
      "arrive: name: expected a kernel name (1 to 4096 bytes, no control "
      "characters)";
  const std::pair<std::string, const char *> Cases[] = {
      {"{\"type\":\"arrive\"}", "arrive: kernel: expected an unsigned id"},
      {LongName, NameError},
      {"{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\\nforged log "
       "line\",\"total\":1,\"occupancy\":2}",
       NameError},
      {"{\"type\":\"depart\",\"kernel\":-2}",
       "depart: kernel: expected an unsigned id, got -2"},
      // A number JSON cannot hold, and a line that is not JSON, say where.
      {"{\"type\":\"depart\",\"kernel\":1e400}",
       "not JSON: number overflow parsing '1e400'"},
      {"{\"type\":\"depart\",", "not JSON: parse error at line 1, column "
                                "18: syntax error"},
      {"{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\",\"total\":-1,"
       "\"occupancy\":2}",
       "arrive: total: expected an unsigned count, got -1"},
      {"{\"type\":\"arrive\",\"kernel\":1,\"total\":1,\"occupancy\":2}",
       "arrive: name: expected a string"},
      {"{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\",\"total\":1,"
       "\"occupancy\":2000}",
       "arrive: occupancy: expected 0 to 1024 CTAs per SM, got 2000"},
      {"{\"type\":\"progress\",\"kernel\":7,\"taken\":1,\"done\":1}",
       "progress: kernel 7 is not one of yours"},
  };
  for (const auto &[Line, Message] : Cases) {
    T.send(Line);
    EXPECT_TRUE(isError(T.line(), Message)) << Line;
  }
  T.send("{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\",\"total\":10,"
         "\"occupancy\":2}");
  EXPECT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
  T.send("{\"type\":\"progress\",\"kernel\":1,\"taken\":\"1\",\"done\":1}");
  EXPECT_TRUE(isError(T.line(), "progress: taken: expected an unsigned count, "
                                "got \\\"1\\\""));
}

TEST(ServiceProtocol, AFirstLineThatIsNotAHelloClosesTheConnection) {
  // docs/service.md: anything but a hello first closes the connection.
  const std::string Path = socketPath("first");
  Running R(Path);
  for (const char *First : {"not json at all", "[1,2,3]", "{\"type\":5}",
                            "{\"type\":\"arrive\",\"kernel\":1}"}) {
    RawTenant T(Path);
    T.send(First);
    EXPECT_TRUE(isError(T.line(), "expected {\\\"type\\\":\\\"hello\\\""));
    EXPECT_TRUE(T.closed()) << First;
  }
  // Another protocol is named, and closes the connection too.
  for (const char *Protocol : {"\"smpart.service/2\"", "9"}) {
    RawTenant T(Path);
    T.send(std::string("{\"type\":\"hello\",\"protocol\":") + Protocol +
           ",\"sm_ids\":[0]}");
    EXPECT_TRUE(isError(
        T.line(), std::string("hello: protocol: expected \\\"") +
                      service::kProtocol + "\\\", got " +
                      (Protocol[0] == '"' ? "\\\"smpart.service/2\\\"" : "9")));
    EXPECT_TRUE(T.closed()) << Protocol;
  }
  EXPECT_TRUE(eventually([&] { return R.S->tenants() == 0; }));
}

TEST(ServiceProtocol, ALineOverTheLimitIsRefusedAlsoWhenItsEndArrives) {
  // The service reads 4 KiB at a time: a line whose end came in the read
  // that took it past the limit was once handled as a line.
  const std::string Path = socketPath("limit");
  Running R(Path);
  RawTenant T(Path);
  T.hello();
  EXPECT_NE(T.line().find("\"welcome\""), std::string::npos);
  T.send(std::string(service::kMaxLine + 100, 'x'));
  EXPECT_TRUE(isError(T.line(), "line longer than 64 KiB"));
  EXPECT_TRUE(T.closed());
}

TEST(ServiceProtocol, AConnectionThatSaysNoHelloIsClosedInTime) {
  // Idle sockets would hold the service's file descriptors for good.
  const std::string Path = socketPath("silent");
  service::ServerOptions O;
  O.socket = Path;
  O.hello_timeout = 200ms;
  Running R(O);
  RawTenant Silent(Path);
  EXPECT_TRUE(isError(Silent.line(), "no hello within 200 ms"));
  EXPECT_TRUE(Silent.closed());
  EXPECT_TRUE(eventually([&] { return R.S->tenants() == 0; }));
}

TEST(ServiceProtocol, MistypedFieldsGetErrorsNeverACrash) {
  const std::string Path = socketPath("types");
  Running R(Path);
  RawTenant T(Path);
  T.hello();
  EXPECT_NE(T.line().find("\"welcome\""), std::string::npos);
  T.send("{\"type\":\"arrive\",\"kernel\":1,\"name\":\"k\",\"total\":10,"
         "\"occupancy\":2}");
  EXPECT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
  T.send("{\"type\":\"progress\",\"kernel\":1,\"taken\":1,\"done\":1,"
         "\"finished\":\"yes\"}");
  EXPECT_TRUE(isError(T.line(), "progress: finished: expected a boolean"));
  T.send("{\"type\":\"progress\",\"kernel\":1,\"taken\":1,\"done\":1,"
         "\"finished\":1}");
  EXPECT_TRUE(isError(T.line(), "progress: finished: expected a boolean"));
  T.send("{\"type\":\"arrive\",\"kernel\":2,\"name\":\"z\",\"total\":0,"
         "\"occupancy\":0}");
  T.send("{\"type\":\"last_block\",\"kernel\":2}");
  T.send("{\"type\":\"depart\",\"kernel\":2}");
  T.send("{\"type\":\"progress\",\"kernel\":1,\"taken\":2,\"done\":2,"
         "\"finished\":false}");
  T.send("{\"type\":\"x\"}");
  // Every line above was handled in order and the service is still up.
  std::string L;
  while ((L = T.line()).find("unknown message type") == std::string::npos)
    ASSERT_FALSE(L.empty());
  EXPECT_EQ(R.S->allocations().size(), 1u);
}

TEST(ServiceClient, MistypedServiceMessagesNeverEndTheTenant) {
  // A service of another version may send fields of other types. The
  // tenant's client reads what it can and drops the rest: json::value()
  // on such a field throws, and on the client's thread that was
  // std::terminate in the user's process.
  FakeService Service("fake-service");
  ::testing::internal::CaptureStderr();
  {
    service::Client C(Service.Path, {0, 2, 4, 6});
    const int Fd = Service.accept();
    ASSERT_GE(Fd, 0);
    ASSERT_TRUE(eventually([&] { return C.connected(); }));
    const std::string Lines =
        "{\"type\":1}\n"
        "{\"type\":\"error\",\"message\":5}\n"
        "{\"type\":\"knobs\",\"kernel\":1,\"op\":7}\n"
        "{\"type\":\"opaque_held\",\"name\":\"p\",\"clear\":\"yes\"}\n"
        "{\"type\":\"error\",\"message\":\"still here\"}\n";
    ASSERT_EQ(::send(Fd, Lines.data(), Lines.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(Lines.size()));
    // The client reads every line before it sees the end of the stream,
    // and only then connects again.
    ::close(Fd);
    const int Again = Service.accept();
    EXPECT_GE(Again, 0);
    ::close(Again);
  }
  const std::string Err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("smpart: service: still here"), std::string::npos) << Err;
}

TEST(ServiceClient, ASocketPathTooLongIsNamed) {
  // sockaddr_un holds 107 bytes and a NUL: a longer SMPART_SERVICE can
  // never connect, and the program hears why once.
  const std::string Path = "/tmp/" + std::string(120, 's') + ".sock";
  std::string Warned;
  std::mutex Mu;
  {
    service::Client C(Path, {0, 2}, [&](const std::string &M) {
      std::lock_guard<std::mutex> L(Mu);
      Warned = M;
    });
    EXPECT_TRUE(eventually([&] {
      std::lock_guard<std::mutex> L(Mu);
      return !Warned.empty();
    }));
  }
  EXPECT_NE(Warned.find("a socket path is at most 107 bytes"),
            std::string::npos)
      << Warned;
}

TEST(ServiceClient, ANameThatIsNotUtf8IsSentWithReplacements) {
  // A partition's name is the program's bytes. JSON needs UTF-8: the
  // client sends U+FFFD for what is not, where dump() threw out of
  // declareOpaque on the program's thread.
  FakeService Service("fake-service-utf8");
  {
    service::Client C(Service.Path, {0, 2, 4, 6});
    RawTenant Conn(Service.accept()); // the service's end of it
    ASSERT_GE(Conn.Fd, 0);
    EXPECT_NE(Conn.line().find("\"type\":\"hello\""), std::string::npos);
    ASSERT_TRUE(eventually([&] { return C.connected(); }));
    C.declareOpaque({"gemm\xff", 1, 1, 1.0});
    EXPECT_NE(Conn.line().find("\"name\":\"gemm\xef\xbf\xbd\""),
              std::string::npos);
  }
}

TEST(Service, TwoTenantsGetDisjointSetsAndADepartureGivesThemBack) {
  const std::string Path = socketPath("two");
  Running R(Path);
  service::Client A(Path, ids()), B(Path, ids());
  auto KA = std::make_shared<LockedKernel>(1, "a", 1000000, ids());
  auto KB =
      std::make_shared<LockedKernel>(1, "b", 1000000, ids()); // same local id
  A.arrive(KA);
  B.arrive(KB);
  ASSERT_TRUE(eventually(
      [&] { return KA->mask().count() == 6 && KB->mask().count() == 6; }));
  EXPECT_FALSE((KA->mask() & KB->mask()).any());
  EXPECT_TRUE(disjoint(R.S->allocations()));
  EXPECT_EQ(R.S->allocations().size(), 2u);
  // Real SM ids (even numbers only) in the knobs each tenant applied.
  for (unsigned S = 1; S < 24; S += 2)
    EXPECT_FALSE(KA->mask().test(S) || KB->mask().test(S));
  B.depart(1);
  ASSERT_TRUE(eventually([&] { return KA->mask().count() == 12; }));
  EXPECT_EQ(R.S->allocations().size(), 1u);
}

TEST(Service, SmsGoToAnotherTenantOnlyAfterTheLeavingOneApplied) {
  const std::string Path = socketPath("applied");
  Running R(Path);
  service::Client A(Path, ids()), B(Path, ids());
  auto KA = std::make_shared<LockedKernel>(1, "a", 1000000, ids());
  auto KB = std::make_shared<LockedKernel>(1, "b", 1000000, ids());
  A.arrive(KA);
  ASSERT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
  KA->setApplied(false); // A's device has not acknowledged its shrink
  B.arrive(KB);
  ASSERT_TRUE(eventually([&] { return KA->mask().count() == 6; }));
  ASSERT_TRUE(eventually([&] { return KB->preempted(); }));
  // Tenant A reports nothing applied: B keeps waiting, for as long as that.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(KB->preempted());
  KA->setApplied(true); // A's client answers `applied` within a millisecond
  ASSERT_TRUE(
      eventually([&] { return !KB->preempted() && KB->mask().count() == 6; }));
  EXPECT_FALSE((KA->mask() & KB->mask()).any());
}

TEST(Service, GarbageGetsErrorsAndTheServiceGoesOn) {
  const std::string Path = socketPath("garbage");
  Running R(Path);
  Tenant G(Path, "--garbage");
  const std::string Replies = G.output();
  EXPECT_EQ(G.wait(), 0);
  EXPECT_NE(Replies.find("\"welcome\""), std::string::npos) << Replies;
  EXPECT_NE(Replies.find("expected a JSON object"), std::string::npos)
      << Replies;
  EXPECT_NE(Replies.find("expected an unsigned id"), std::string::npos)
      << Replies;
  EXPECT_NE(Replies.find("is not one of yours"), std::string::npos) << Replies;
  EXPECT_NE(Replies.find("arrive: total: expected an unsigned count"),
            std::string::npos)
      << Replies;
  EXPECT_TRUE(R.S->allocations().empty());
  // Still serving.
  service::Client C(Path, ids());
  auto K = std::make_shared<LockedKernel>(1, "k", 1000, ids());
  C.arrive(K);
  EXPECT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
}

TEST(Service, ProcessesAsTenantsOneCrashes) {
  const std::string Path = socketPath("procs");
  Running R(Path);
  Tenant T1(Path, "first"), T2(Path, "second");
  ASSERT_TRUE(T1.ready());
  ASSERT_TRUE(T2.ready());
  ASSERT_TRUE(eventually([&] {
    auto A = R.S->allocations();
    return A.size() == 2 && A[0].mask.count() == 6 && A[1].mask.count() == 6;
  }));
  EXPECT_TRUE(disjoint(R.S->allocations()));
  // The second crashes: its kernel departs and the first gets every SM.
  T2.kill(SIGKILL);
  ASSERT_TRUE(eventually([&] {
    auto A = R.S->allocations();
    return A.size() == 1 && A[0].name == "first" && A[0].mask.count() == 12;
  }));
  EXPECT_TRUE(eventually([&] { return R.S->tenants() == 1; }));
  T1.kill(SIGKILL);
}

TEST(Service, RestartedServicePicksTenantsUpAgain) {
  const std::string Path = socketPath("restart");
  auto R = std::make_unique<Running>(Path);
  service::Client C(Path, ids());
  auto K = std::make_shared<LockedKernel>(3, "k", 1000000, ids());
  auto Other = std::make_shared<LockedKernel>(4, "other", 1000000, ids());
  C.arrive(K);
  C.arrive(Other);
  ASSERT_TRUE(eventually([&] { return K->mask().count() == 6; }));
  R.reset(); // the service dies: the tenant keeps its knobs
  struct stat St{};
  EXPECT_NE(::stat(Path.c_str(), &St), 0) << "socket removed on stop";
  EXPECT_EQ(K->mask().count(), 6u);
  R = std::make_unique<Running>(Path);
  ASSERT_TRUE(eventually([&] { return R->S->allocations().size() == 2; }));
  C.depart(4);
  EXPECT_TRUE(eventually([&] { return K->mask().count() == 12; }));
}

TEST(Service, RefusesAStaleOrBusySocketPathClearly) {
  const std::string Path = socketPath("busy");
  Running R(Path);
  service::ServerOptions O;
  O.socket = Path;
  std::string Error;
  EXPECT_FALSE(service::Server::open(O, &Error));
  EXPECT_NE(Error.find("in use"), std::string::npos) << Error;
  // The refused service leaves the running one's trace alone.
  const std::string Trace = Path + ".trace.json";
  {
    std::FILE *F = std::fopen(Trace.c_str(), "w");
    ASSERT_TRUE(F);
    std::fputs("the running service's trace", F);
    std::fclose(F);
  }
  O.trace = Trace;
  EXPECT_FALSE(service::Server::open(O, &Error));
  char Kept[64] = {0};
  std::FILE *F = std::fopen(Trace.c_str(), "r");
  ASSERT_TRUE(F);
  EXPECT_TRUE(std::fgets(Kept, sizeof Kept, F));
  std::fclose(F);
  std::remove(Trace.c_str());
  EXPECT_STREQ(Kept, "the running service's trace");
  O.trace.clear();
  O.socket = socketPath("policy");
  O.policy = "cd-search";
  EXPECT_FALSE(service::Server::open(O, &Error));
  EXPECT_NE(Error.find("needs --profiles"), std::string::npos) << Error;
}

TEST(Service, OnlinePolicyActsOnTheServiceEpochs) {
  // cd-search-online on a 132-SM GPU: arrivals get even halves, then the
  // classification epoch finds stream_triad's curve saturated on 66 SMs
  // and takes performance mode's first step: 12 of its SMs to sgemm. Only
  // the service's epochs can make that step.
  const std::string Path = socketPath("online");
  const std::string TracePath = Path + ".trace.json";
  std::vector<unsigned> Sms;
  for (unsigned I = 0; I < 132; ++I)
    Sms.push_back(I);
  std::string Trace;
  {
    service::ServerOptions O;
    O.socket = Path;
    O.policy = "cd-search-online";
    O.profiles = SMPART_POLICY_EXAMPLES "/compute_memory_pair.json";
    O.trace = TracePath;
    O.sm_ids = Sms;
    O.epoch_us = 5000; // several progress reports and acks per epoch
    Running R(O);
    {
      service::Client A(Path, Sms), B(Path, Sms);
      auto Sgemm = std::make_shared<LockedKernel>(1, "sgemm", 1000000, Sms);
      auto Stream =
          std::make_shared<LockedKernel>(1, "stream_triad", 1000000, Sms);
      A.arrive(Sgemm);
      B.arrive(Stream);
      ASSERT_TRUE(eventually([&] {
        return Sgemm->mask().count() == 78 && Stream->mask().count() == 54;
      }));
      EXPECT_FALSE((Sgemm->mask() & Stream->mask()).any());
    } // the tenants leave before the service stops
    R.shut(); // flushes the trace
  }
  std::FILE *F = std::fopen(TracePath.c_str(), "r");
  ASSERT_TRUE(F);
  char Buf[4096];
  std::size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    Trace.append(Buf, N);
  std::fclose(F);
  std::remove(TracePath.c_str());
  EXPECT_NE(Trace.find("\"name\":\"epoch\""), std::string::npos);
  EXPECT_NE(Trace.find("\"trigger\":\"epoch\""), std::string::npos);
  EXPECT_NE(Trace.find("classify: stream_triad on 66 of 132 SMs"),
            std::string::npos);
}

TEST(Service, RefusesAnUnknownPolicyAndABadEpochLength) {
  service::ServerOptions O;
  O.socket = socketPath("bad-options");
  O.policy = "cd-search-offline";
  std::string Error;
  EXPECT_FALSE(service::Server::open(O, &Error));
  EXPECT_NE(Error.find("unknown policy"), std::string::npos) << Error;
  O.policy = "even";
  O.epoch_us = 10;
  EXPECT_FALSE(service::Server::open(O, &Error));
  EXPECT_NE(Error.find("--epoch-us"), std::string::npos) << Error;
}

} // namespace
