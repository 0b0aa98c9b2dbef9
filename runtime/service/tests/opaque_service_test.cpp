// smpartd's opaque partitions (docs/service.md): a tenant declares one and
// hears its target, holds the SMs a launch runs on and hears when the
// kernels leaving them applied, and bad messages get errors naming the
// type and the JSON path; a tenant that leaves gives its SMs back.
#include "locked_kernel.hpp"
#include "running_service.hpp"
#include "smpart/service.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace smpart;
using namespace std::chrono_literals;
using nlohmann::json;
using smpart::testing::eventually;
using smpart::testing::ids;
using smpart::testing::Running;
using smpart::testing::socketPath;

namespace {

/// A tenant speaking the protocol by hand.
struct RawTenant {
  explicit RawTenant(const std::string &Path) {
    Fd = smpart::testing::connectTo(Path);
    send({{"type", "hello"},
          {"protocol", service::kProtocol},
          {"pid", 1},
          {"sm_ids", ids()}});
    EXPECT_EQ(next().value("type", ""), "welcome");
  }
  ~RawTenant() { close(); }
  void close() {
    if (Fd >= 0)
      ::close(Fd);
    Fd = -1;
  }
  void send(const json &J) { sendText(J.dump()); }
  void sendText(const std::string &Line) {
    const std::string L = Line + "\n";
    EXPECT_EQ(::send(Fd, L.data(), L.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(L.size()));
  }
  /// The next line, parsed (null after 10 s of silence or a close).
  json next() {
    for (;;) {
      if (auto Eol = In.find('\n'); Eol != std::string::npos) {
        json J = json::parse(In.substr(0, Eol));
        In.erase(0, Eol + 1);
        Seen.push_back(J);
        return J;
      }
      pollfd P{Fd, POLLIN, 0};
      if (::poll(&P, 1, 10000) <= 0)
        return nullptr;
      char Buf[4096];
      const ssize_t N = ::recv(Fd, Buf, sizeof Buf, 0);
      if (N <= 0)
        return nullptr;
      In.append(Buf, static_cast<std::size_t>(N));
    }
  }
  /// The next line of \p Type (knobs lines before it are kept in Seen).
  json nextOf(const std::string &Type) {
    for (json J = next(); !J.is_null(); J = next())
      if (J.value("type", "") == Type)
        return J;
    return nullptr;
  }
  /// The last knobs seq sent for kernel \p K among the lines read.
  unsigned long long lastSeq(unsigned long long K) const {
    unsigned long long Seq = 0;
    for (const json &J : Seen)
      if (J.value("type", "") == "knobs" && J.value("kernel", 0ull) == K)
        Seq = std::max(Seq, J.value("seq", 0ull));
    return Seq;
  }
  int Fd = -1;
  std::string In;
  std::vector<json> Seen;
};

json arrive(unsigned long long K) {
  return {{"type", "arrive"},
          {"kernel", K},
          {"name", "k"},
          {"total", 100000},
          {"occupancy", 2}};
}

SmMask maskOf(const std::vector<unsigned> &Ids) {
  SmMask M;
  for (unsigned I : Ids)
    M.set(I);
  return M;
}

} // namespace

TEST(ServiceOpaque, DeclareHearsTheTargetAndHoldClearsOnceApplied) {
  const std::string Path = socketPath("opaque-hold");
  Running R(Path, "even", ids());
  RawTenant T(Path);
  T.send(arrive(1));
  ASSERT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));

  T.send({{"type", "opaque_declare"}, {"name", "cublas"}, {"granularity", 2}});
  json Target = T.nextOf("opaque_target");
  EXPECT_EQ(Target["name"], "cublas");
  EXPECT_EQ(Target["sms"], 6); // the kernel and the partition: 6 each

  // The launch runs on six SMs the driver chose; the kernel must leave
  // them first, and has not applied its knobs yet.
  const std::vector<unsigned> Held = {0, 4, 8, 12, 16, 20};
  T.send({{"type", "opaque_hold"}, {"name", "cublas"}, {"sm_ids", Held}});
  json Reply = T.nextOf("opaque_held");
  EXPECT_EQ(Reply["clear"], false);
  EXPECT_EQ(Reply["sms"], 6);
  // Every knobs line sent since names none of the held SMs.
  for (const json &J : T.Seen) {
    if (J.value("type", "") != "knobs" || !J.contains("sms") ||
        J.value("preempt", false))
      continue;
    const SmMask M = maskOf(J["sms"].get<std::vector<unsigned>>());
    EXPECT_TRUE((M & maskOf(Held)).none()) << J.dump();
  }
  for (const KernelAllocation &A : R.S->allocations())
    EXPECT_TRUE((A.mask & maskOf(Held)).none());

  // The tenant's device applied: the service says the SMs are clear.
  T.send({{"type", "applied"}, {"kernel", 1}, {"seq", T.lastSeq(1)}});
  Reply = T.nextOf("opaque_held");
  EXPECT_EQ(Reply["name"], "cublas");
  EXPECT_EQ(Reply["clear"], true);

  // A second kernel: the target drops and the tenant hears it.
  T.send(arrive(2));
  Target = T.nextOf("opaque_target");
  EXPECT_EQ(Target["sms"], 4);

  // Removed: the kernels get the held SMs back.
  T.send({{"type", "opaque_remove"}, {"name", "cublas"}});
  EXPECT_TRUE(eventually([&] {
    SmMask All;
    for (const KernelAllocation &A : R.S->allocations())
      All |= A.mask | A.waiting;
    return (All & maskOf(Held)).any();
  }));
}

TEST(ServiceOpaque, BadMessagesNameTheTypeAndTheField) {
  const std::string Path = socketPath("opaque-bad");
  Running R(Path, "even", ids());
  RawTenant T(Path);
  RawTenant Other(Path);
  const std::pair<json, std::string> Cases[] = {
      {{{"type", "opaque_declare"}},
       "opaque_declare: name: expected the partition's name (1 to 128 "
       "bytes), missing"},
      {{{"type", "opaque_declare"}, {"name", 7}},
       "opaque_declare: name: expected the partition's name (1 to 128 "
       "bytes), got 7"},
      {{{"type", "opaque_declare"}, {"name", "a"}, {"weight", -1}},
       "opaque_declare: weight: expected a number above 0 (at most 1e6), got "
       "-1"},
      {{{"type", "opaque_declare"}, {"name", "a"}, {"min_sms", 0}},
       "opaque_declare: min_sms: expected an SM count (1 to 512), got 0"},
      {{{"type", "opaque_declare"}, {"name", "a"}, {"granularity", "2"}},
       "opaque_declare: granularity: expected an SM count (1 to 512), got "
       "\"2\""},
      {{{"type", "opaque_hold"}, {"name", "a"}},
       "opaque_hold: sm_ids: expected an array of SM ids, missing"},
      {{{"type", "opaque_hold"}, {"name", "a"}, {"sm_ids", {0, "x"}}},
       "opaque_hold: sm_ids[1]: expected an SM id (0 to 511), got \"x\""},
      {{{"type", "opaque_hold"}, {"name", "a"}, {"sm_ids", {2, 2}}},
       "opaque_hold: sm_ids[1]: SM 2 is listed twice"},
      {{{"type", "opaque_hold"}, {"name", "a"}, {"sm_ids", {0}}},
       "opaque_hold: name: 'a' is not one of your partitions "
       "(opaque_declare it)"},
      {{{"type", "opaque_remove"}, {"name", "a"}},
       "opaque_remove: name: 'a' is not one of your partitions "
       "(opaque_declare it)"},
  };
  for (const auto &[Msg, Want] : Cases) {
    T.send(Msg);
    const json E = T.nextOf("error");
    EXPECT_EQ(E.value("message", ""), Want) << Msg.dump();
  }
  // A name another tenant declared, and SMs the service does not have.
  Other.send({{"type", "opaque_declare"}, {"name", "nccl"}});
  EXPECT_EQ(Other.nextOf("opaque_target")["name"], "nccl");
  T.send({{"type", "opaque_declare"}, {"name", "nccl"}});
  EXPECT_EQ(T.nextOf("error").value("message", ""),
            "opaque_declare: name: 'nccl' is another tenant's partition");
  T.send({{"type", "opaque_declare"}, {"name", "mine"}});
  EXPECT_EQ(T.nextOf("opaque_target")["name"], "mine");
  T.send({{"type", "opaque_hold"}, {"name", "mine"}, {"sm_ids", {0, 3}}});
  EXPECT_EQ(T.nextOf("error").value("message", ""),
            "opaque_hold: sm_ids[1]: SM 3 is not one of the service's");
  // At most 64 partitions per tenant (each is planned at every epoch).
  for (int I = 1; I < 64; ++I) {
    T.send({{"type", "opaque_declare"}, {"name", "p" + std::to_string(I)}});
    ASSERT_FALSE(T.nextOf("opaque_target").is_null()) << I;
  }
  T.send({{"type", "opaque_declare"}, {"name", "one-too-many"}});
  EXPECT_EQ(T.nextOf("error").value("message", ""),
            "opaque_declare: name: 'one-too-many' would be your 65th "
            "partition; at most 64 per tenant");
  // The connection is still served.
  T.send(arrive(1));
  EXPECT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
}

TEST(ServiceOpaque, AHoldBeyondTheTargetOrOnAnotherHoldPreemptsNobody) {
  const std::string Path = socketPath("opaque-hog");
  Running R(Path, "even", ids());
  RawTenant Victim(Path), Hog(Path);
  Victim.send(arrive(1));
  ASSERT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
  Victim.send({{"type", "opaque_declare"}, {"name", "cublas"}});
  ASSERT_GE(Victim.nextOf("opaque_target").value("sms", 0u), 1u);
  Hog.send({{"type", "opaque_declare"}, {"name", "hog"}});
  const unsigned Target = Hog.nextOf("opaque_target")["sms"];
  ASSERT_LT(Target, ids().size());
  // Every SM of the service: more than the plan gave the partition.
  Hog.send({{"type", "opaque_hold"}, {"name", "hog"}, {"sm_ids", ids()}});
  EXPECT_EQ(Hog.nextOf("error").value("message", ""),
            "opaque_hold: sm_ids: " + std::to_string(ids().size()) +
                " SMs, more than the " + std::to_string(Target) +
                " the partition may hold (its target, or its last hold)");
  // The victim's partition holds an SM first: the hog may not claim it.
  const std::vector<unsigned> VictimHeld = {ids().front()};
  Victim.send(
      {{"type", "opaque_hold"}, {"name", "cublas"}, {"sm_ids", VictimHeld}});
  ASSERT_FALSE(Victim.nextOf("opaque_held").is_null());
  Hog.send({{"type", "opaque_hold"},
            {"name", "hog"},
            {"sm_ids", {VictimHeld.front()}}});
  EXPECT_EQ(Hog.nextOf("error").value("message", ""),
            "opaque_hold: sm_ids: SM " + std::to_string(VictimHeld.front()) +
                " is held by partition 'cublas'");
  // The victim's kernel was never preempted for the hog.
  for (const KernelAllocation &A : R.S->allocations())
    EXPECT_FALSE(A.preempted);
}

TEST(ServiceOpaque, ATenantThatLeavesGivesItsPartitionsSmsBack) {
  const std::string Path = socketPath("opaque-leave");
  Running R(Path, "even", ids());
  RawTenant Kernels(Path);
  Kernels.send(arrive(1));
  ASSERT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));
  {
    RawTenant Library(Path);
    Library.send({{"type", "opaque_declare"}, {"name", "cudnn"}});
    ASSERT_EQ(Library.nextOf("opaque_target")["sms"], 6);
    Library.send({{"type", "opaque_hold"},
                  {"name", "cudnn"},
                  {"sm_ids", {2, 6, 10, 14, 18, 22}}});
    Library.nextOf("opaque_held");
    ASSERT_TRUE(eventually([&] {
      const auto A = R.S->allocations();
      return A.size() == 1 && A[0].mask.count() + A[0].waiting.count() == 6;
    }));
  } // the library tenant exits
  EXPECT_TRUE(eventually([&] {
    const auto A = R.S->allocations();
    return A.size() == 1 && (A[0].mask | A[0].waiting).count() == 12;
  }));
}

// A tenant process's view through service::Client: it declares a
// partition, hears its target, and its hold is clear once the other
// tenant's kernel applied the knobs that moved it off the held SMs.
TEST(ServiceOpaque, ClientDeclaresHoldsAndHearsClear) {
  const std::string Path = socketPath("opaque-client");
  Running R(Path, "even", ids());
  service::Client Kernels(Path, ids());
  auto K =
      std::make_shared<smpart::testing::LockedKernel>(1, "k", 1000000, ids());
  K->setApplied(false);
  Kernels.arrive(K);
  ASSERT_TRUE(eventually([&] { return R.S->allocations().size() == 1; }));

  service::Client Library(Path, ids());
  OpaqueTenant T;
  T.name = "cublas";
  T.granularity = 3;
  Library.declareOpaque(T);
  ASSERT_TRUE(eventually([&] { return Library.opaqueTarget("cublas") == 6; }));
  const std::vector<unsigned> Held = {22, 2, 14, 6, 10, 18};
  EXPECT_FALSE(Library.holdOpaque("cublas", Held));
  ASSERT_TRUE(eventually([&] { return (K->mask() & maskOf(Held)).none(); }));
  // Not clear while the kernel's device has not applied its knobs.
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(Library.holdOpaque("cublas", Held));
  K->setApplied(true);
  EXPECT_TRUE(eventually([&] { return Library.holdOpaque("cublas", Held); }));
  EXPECT_TRUE((K->mask() & maskOf(Held)).none());

  // Removed: the kernel grows back onto them.
  Library.removeOpaque("cublas");
  EXPECT_EQ(Library.opaqueTarget("cublas"), 0u);
  EXPECT_TRUE(eventually([&] { return K->mask().count() == 12; }));
}
