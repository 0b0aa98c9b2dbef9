// Opaque partitions beside rewritten kernels (README "Opaque partitions").
#include "fake_kernel.hpp"
#include "online_policies.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/input_error.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace smpart;
using smpart::testing::Call;
using smpart::testing::FakeKernel;

namespace {

const std::string Examples = SMPART_POLICY_EXAMPLES;

policy::ProfileSet examples(const char *Name) {
  return policy::loadProfiles(Examples + "/" + Name);
}

const policy::Policy &pol(const std::string &Name) {
  const policy::Policy *P = policy::findPolicy(Name);
  EXPECT_NE(P, nullptr) << Name;
  return *P;
}

std::vector<unsigned> denseIds(unsigned N) {
  std::vector<unsigned> V;
  for (unsigned I = 0; I < N; ++I)
    V.push_back(I);
  return V;
}

// Real SM ids are not dense and come out of order.
const std::vector<unsigned> SparseIds = {21, 1, 3, 4, 7, 8, 9, 12, 15, 20};

SmMask maskOf(const std::vector<unsigned> &Ids) {
  SmMask M;
  for (unsigned I : Ids)
    M.set(I);
  return M;
}

// Fake kernels whose device follows a knob write only once the test
// acknowledges it (Applied), and a check at every knob write: no SM an
// opaque partition holds (as the controller reports it) is in the mask of
// a kernel that may take blocks.
struct World {
  std::vector<Call> Log;
  std::vector<std::shared_ptr<FakeKernel>> Kernels;
  std::vector<std::string> Warnings;
  std::vector<unsigned> Ids;
  Controller *C = nullptr;
  /// What the device runs under: the knobs last acknowledged.
  std::map<unsigned long long, std::pair<SmMask, bool>> Device;
  /// Writes wait for acknowledge() instead of being applied at once.
  bool HoldAcks = false;
  int Violations = 0;
  int Writes = 0;

  explicit World(std::vector<unsigned> SmIds) : Ids(std::move(SmIds)) {}

  SmMask held() const {
    SmMask H;
    if (C)
      for (const OpaqueAllocation &A : C->opaqueAllocations())
        H |= A.held;
    return H;
  }

  std::shared_ptr<FakeKernel> make(unsigned long long Id, const std::string &N,
                                   unsigned long long Total) {
    auto K = std::make_shared<FakeKernel>(Id, N, Total, 8, Ids, &Log);
    FakeKernel *Raw = K.get();
    K->OnMaskWrite = [this, Raw] { onWrite(*Raw); };
    Device[Id] = {Raw->Mask, false};
    Kernels.push_back(K);
    return K;
  }

  void onWrite(FakeKernel &K) {
    ++Writes;
    // The controller's lock is held during the write: the held set is
    // read once the call returns (checkWrites).
    PendingCheck.push_back(&K);
    if (HoldAcks)
      K.Applied = false;
    else
      Device[K.Id] = {K.Mask, K.Preempted};
  }
  std::vector<FakeKernel *> PendingCheck;
  /// Every knob write since the last call: none names a held SM unless the
  /// kernel is preempted.
  void checkWrites(const SmMask &Held) {
    for (FakeKernel *K : PendingCheck)
      if (!K->Preempted && (K->Mask & Held).any()) {
        ++Violations;
        ADD_FAILURE() << "kernel " << K->Id << " was given a held SM";
      }
    PendingCheck.clear();
  }

  void acknowledge(FakeKernel &K) {
    K.Applied = true;
    Device[K.Id] = {K.Mask, K.Preempted};
    C->onKnobsApplied(K.Id);
  }

  ControllerOptions options() {
    ControllerOptions O;
    O.warn = [this](const std::string &W) { Warnings.push_back(W); };
    return O;
  }
};

SmMask rewrittenUnion(const World &W) {
  SmMask M;
  for (auto &K : W.Kernels)
    if (!K->Preempted && K->P.taken < K->P.total)
      M |= K->Mask;
  return M;
}

OpaqueTenant tenant(const std::string &Name, unsigned Min = 1,
                    unsigned Gran = 1, double Weight = 1.0) {
  OpaqueTenant T;
  T.name = Name;
  T.min_sms = Min;
  T.granularity = Gran;
  T.weight = Weight;
  return T;
}

} // namespace

TEST(Opaque, HeldSmsMoveOnlyOnceAcknowledgedAndNeverIntoAMask) {
  World W(SparseIds);
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  W.C = &C;
  auto A = W.make(1, "sgemm", 100000);
  auto B = W.make(2, "stream_triad", 100000);
  C.onArrival(A);
  C.onArrival(B);
  const SmMask AWas = A->Mask, BWas = B->Mask;

  C.addOpaque(tenant("cublas"));
  // Three planned parties on 10 SMs: 4, 3, 3; the partition is last.
  EXPECT_EQ(C.opaqueTarget("cublas"), 3u);
  // Declaring a partition moves nothing: it holds no SM before a launch.
  EXPECT_EQ(A->Mask, AWas);
  EXPECT_EQ(B->Mask, BWas);

  // The driver picks the partition's SMs: one from each kernel and one
  // more. The kernels shrink off them at once but have not acknowledged.
  W.HoldAcks = true;
  const SmMask Held = maskOf({1, 12, 21});
  W.PendingCheck.clear();
  EXPECT_FALSE(C.holdOpaque("cublas", {21, 1, 12}));
  W.checkWrites(Held);
  EXPECT_EQ(W.Violations, 0);
  EXPECT_TRUE((A->Mask & Held).none());
  EXPECT_TRUE((B->Mask & Held).none());
  EXPECT_EQ(C.opaqueAllocations().at(0).held, Held);
  // Polling is idempotent: no knob is written again.
  const std::size_t Writes = W.Log.size();
  EXPECT_FALSE(C.holdOpaque("cublas", {12, 21, 1}));
  EXPECT_EQ(W.Log.size(), Writes);
  // The device still runs A's old knobs until A acknowledges.
  W.acknowledge(*A);
  EXPECT_FALSE(C.holdOpaque("cublas", {1, 12, 21}));
  W.acknowledge(*B);
  EXPECT_TRUE(C.holdOpaque("cublas", {1, 12, 21}));
  EXPECT_TRUE(C.holdOpaque("cublas", {1, 12, 21}));
  W.checkWrites(Held);
  EXPECT_EQ(W.Violations, 0);
  // The others went back to the kernels: every SM is used by one kind.
  EXPECT_EQ(rewrittenUnion(W) | Held, maskOf(SparseIds));
  EXPECT_TRUE((W.Device[1].first & Held).none());
  EXPECT_TRUE((W.Device[2].first & Held).none());
  EXPECT_TRUE(W.Warnings.empty());
}

TEST(Opaque, ResizeHappensOnlyAtTheLaunchBoundary) {
  World W(denseIds(12));
  Controller C(pol("even"), policy::ProfileSet{}, W.Ids, W.options());
  W.C = &C;
  C.addOpaque(tenant("nccl"));
  // Alone, the partition may take the whole GPU.
  EXPECT_EQ(C.opaqueTarget("nccl"), 12u);
  std::vector<unsigned> Six = {0, 1, 2, 3, 4, 5};
  auto A = W.make(1, "k", 100000);
  C.onArrival(A);
  EXPECT_EQ(C.opaqueTarget("nccl"), 6u);
  EXPECT_TRUE(C.holdOpaque("nccl", Six));
  EXPECT_EQ(A->Mask, maskOf({6, 7, 8, 9, 10, 11}));

  // A second kernel: the target drops to 4 at once, but the partition
  // keeps its 6 SMs until its next launch; the kernels share the rest.
  auto B = W.make(2, "k2", 100000);
  W.PendingCheck.clear();
  C.onArrival(B);
  W.checkWrites(maskOf(Six));
  EXPECT_EQ(C.opaqueTarget("nccl"), 4u);
  EXPECT_EQ(C.opaqueAllocations().at(0).held, maskOf(Six));
  EXPECT_EQ(rewrittenUnion(W), maskOf({6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(A->Mask.count() + B->Mask.count(), 6u);

  // Epochs and re-plans between launches do not resize it either.
  C.replan();
  EXPECT_EQ(C.opaqueAllocations().at(0).held, maskOf(Six));

  // The next launch runs on 4 SMs (not the lowest ones: the driver's
  // choice); the two it gave up go to the kernels at once.
  const std::vector<unsigned> Four = {1, 3, 4, 5};
  EXPECT_TRUE(C.holdOpaque("nccl", Four));
  W.checkWrites(maskOf(Four));
  EXPECT_EQ(W.Violations, 0);
  EXPECT_EQ(rewrittenUnion(W) | maskOf(Four), maskOf(denseIds(12)));
  EXPECT_TRUE((rewrittenUnion(W) & maskOf(Four)).none());
}

TEST(Opaque, RemoveGivesTheSmsBack) {
  World W(SparseIds);
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  W.C = &C;
  auto A = W.make(1, "sgemm", 100000);
  C.onArrival(A);
  C.addOpaque(tenant("cudnn"));
  ASSERT_EQ(C.opaqueTarget("cudnn"), 5u);
  EXPECT_TRUE(C.holdOpaque("cudnn", {1, 3, 4, 7, 8}));
  EXPECT_EQ(A->Mask, maskOf({9, 12, 15, 20, 21}));
  C.removeOpaque("cudnn");
  EXPECT_EQ(A->Mask, maskOf(SparseIds));
  EXPECT_EQ(C.opaqueTarget("cudnn"), 0u);
  EXPECT_TRUE(C.opaqueAllocations().empty());
  // An undeclared tenant holds nothing, with one warning.
  EXPECT_FALSE(C.holdOpaque("cudnn", {1}));
  EXPECT_EQ(A->Mask, maskOf(SparseIds));
  EXPECT_EQ(W.Warnings.size(), 1u);
}

// A partition that holds its target needs no re-plan: a kernel whose
// stream's next launch is queued leaves its SMs to that launch, and the
// other kernels keep theirs.
TEST(Opaque, QueuedSuccessorKeepsItsSmsBesideASatisfiedPartition) {
  World W(SparseIds);
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  W.C = &C;
  auto A = W.make(1, "sgemm", 100000);
  C.onArrival(A);
  C.addOpaque(tenant("cudnn"));
  ASSERT_TRUE(C.holdOpaque("cudnn", {1, 3, 4, 7, 8}));
  auto B = W.make(2, "stream_triad", 1000);
  C.onArrival(B);
  ASSERT_GE(C.opaqueAllocations()[0].held.count(), C.opaqueTarget("cudnn"));
  const SmMask AMask = A->Mask, BMask = B->Mask;
  ASSERT_TRUE(BMask.any());
  B->P.taken = 1000;
  C.onLastBlockTaken(2, /*SuccessorQueued=*/true);
  C.onDeparture(2, /*SuccessorQueued=*/true);
  EXPECT_EQ(A->Mask, AMask) << "A did not grow onto B's SMs";
  auto Next = W.make(3, "stream_triad", 1000);
  C.onArrival(Next);
  EXPECT_FALSE(Next->Preempted);
  EXPECT_EQ(Next->Mask, BMask);
  EXPECT_EQ(W.Violations, 0);
}

TEST(Opaque, TargetsRespectWeightGranularityAndMinimum) {
  World W(denseIds(16));
  Controller C(pol("even"), policy::ProfileSet{}, W.Ids, W.options());
  W.C = &C;
  auto A = W.make(1, "k", 100000);
  C.onArrival(A);
  // Weight 3 against a kernel's 1: 12 of 16.
  C.addOpaque(tenant("heavy", 1, 1, 3.0));
  EXPECT_EQ(C.opaqueTarget("heavy"), 12u);
  // Re-declared with granularity 8: rounded down to a multiple of 8.
  C.addOpaque(tenant("heavy", 1, 8, 3.0));
  EXPECT_EQ(C.opaqueTarget("heavy"), 8u);
  // A minimum above its share: rounded up to the minimum.
  C.addOpaque(tenant("light", 6, 2, 0.1));
  EXPECT_EQ(C.opaqueTarget("light"), 6u);
  // One that cannot fit beside them: 0, and the plan says why.
  C.addOpaque(tenant("huge", 16));
  EXPECT_EQ(C.opaqueTarget("huge"), 0u);
  bool Said = false;
  for (const std::string &N : C.lastPlan().notes)
    Said |= N.find("huge") != std::string::npos;
  EXPECT_TRUE(Said);
  C.removeOpaque("huge");
  // Nothing held yet: the kernel still runs on every SM.
  EXPECT_EQ(A->Mask, maskOf(denseIds(16)));
}

TEST(Opaque, PlanMarksKindsAndHeldIds) {
  World W(SparseIds);
  Controller C(pol("cd-search"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  W.C = &C;
  auto A = W.make(1, "sgemm", 100000);
  C.onArrival(A);
  C.addOpaque(tenant("cublas"));
  ASSERT_TRUE(C.holdOpaque("cublas", {20, 21, 1, 3, 4}));
  const policy::Plan P = C.lastPlan();
  ASSERT_EQ(P.kernels.size(), 2u);
  EXPECT_EQ(P.kernels[0].kind, "rewritten");
  EXPECT_EQ(P.kernels[1].kind, "opaque");
  EXPECT_EQ(P.kernels[1].name, "cublas");
  EXPECT_EQ(P.kernels[1].sms, 5);
  EXPECT_EQ(P.kernels[1].held_sm_ids, (std::vector<unsigned>{1, 3, 4, 20, 21}));
  EXPECT_EQ(P.num_sms, 5);
  EXPECT_EQ(P.gpu_sms, 10);

  const auto J = policy::planToJson(P);
  EXPECT_EQ(J["kernels"][0]["kind"], "rewritten");
  EXPECT_EQ(J["kernels"][1]["kind"], "opaque");
  EXPECT_EQ(J["kernels"][1]["held_sm_ids"].size(), 5u);
  const policy::Plan Back = policy::parsePlan(J.dump(), "p.json");
  EXPECT_EQ(Back.kernels[1].kind, "opaque");
  EXPECT_EQ(Back.kernels[1].held_sm_ids, P.kernels[1].held_sm_ids);
  EXPECT_EQ(Back.gpu_sms, 10);

  auto Bad = J;
  Bad["kernels"][1]["kind"] = "library";
  try {
    policy::parsePlan(Bad.dump(), "p.json");
    FAIL() << "a kind other than rewritten/opaque was accepted";
  } catch (const policy::InputError &E) {
    EXPECT_NE(std::string(E.what()).find("p.json: kernels[1].kind"),
              std::string::npos)
        << E.what();
  }
  Bad = J;
  Bad["kernels"][0]["held_sm_ids"] = {1};
  try {
    policy::parsePlan(Bad.dump(), "p.json");
    FAIL() << "held_sm_ids on a rewritten entry was accepted";
  } catch (const policy::InputError &E) {
    EXPECT_NE(std::string(E.what()).find("kernels[0].held_sm_ids"),
              std::string::npos)
        << E.what();
  }
}

// Every policy: a profiled and an unprofiled kernel, an unprofiled
// partition and one with a profile under its name. Spatial policies plan
// the profiled partition from its profile; sharing ones give it its
// weighted share. Held SMs never enter a mask.
TEST(Opaque, EveryPolicyPlansBothKinds) {
  for (const policy::Policy *P : policy::allPolicies()) {
    const std::string Name(P->name());
    World W(denseIds(132));
    Controller C(*P, examples("compute_compute_pair.json"), W.Ids, W.options());
    W.C = &C;
    auto A = W.make(1, "sgemm", 1000000);
    auto B = W.make(2, "unprofiled", 1000000);
    C.onArrival(A);
    C.onArrival(B);
    C.addOpaque(tenant("cublas"));
    C.addOpaque(tenant("nbody"));
    const unsigned T1 = C.opaqueTarget("cublas"), T2 = C.opaqueTarget("nbody");
    EXPECT_GT(T1, 0u) << Name;
    EXPECT_GT(T2, 0u) << Name;
    EXPECT_LT(T1 + T2, 132u) << Name;
    auto Allocs = C.opaqueAllocations();
    EXPECT_FALSE(Allocs[0].profiled);
    EXPECT_TRUE(Allocs[1].profiled);
    std::vector<unsigned> H1, H2;
    for (unsigned I = 0; I < T1; ++I)
      H1.push_back(131 - 2 * I);
    for (unsigned I = 0; I < T2; ++I)
      H2.push_back(130 - 2 * I);
    W.PendingCheck.clear();
    EXPECT_TRUE(C.holdOpaque("cublas", H1)) << Name;
    EXPECT_TRUE(C.holdOpaque("nbody", H2)) << Name;
    const SmMask Held = maskOf(H1) | maskOf(H2);
    W.checkWrites(Held);
    EXPECT_EQ(W.Violations, 0) << Name;
    EXPECT_TRUE((rewrittenUnion(W) & Held).none()) << Name;
    EXPECT_FALSE(A->Preempted) << Name;
    EXPECT_FALSE(B->Preempted) << Name;
    const policy::Plan Pl = C.lastPlan();
    EXPECT_EQ(Pl.num_sms, static_cast<int>(132 - T1 - T2)) << Name;
    int Opaque = 0;
    for (const policy::KernelDecision &D : Pl.kernels)
      Opaque += D.kind == "opaque";
    EXPECT_EQ(Opaque, 2) << Name;
    for (const std::string &Warning : W.Warnings)
      EXPECT_EQ(Warning.find("opaque"), std::string::npos) << Warning;
  }
}

// Seeded runs under every policy: kernels arrive, take blocks and leave;
// two partitions launch now and then on SMs the "driver" picks at random
// at their target size; acknowledgements come late. At every knob write no
// held SM is in a mask a kernel may take blocks under, and whenever
// holdOpaque says the SMs are clear, no kernel's device (acknowledged)
// knobs allow one of them.
TEST(Opaque, RandomCoRunsWithPartitionsUnderEveryPolicy) {
  for (const policy::Policy *P : policy::allPolicies()) {
    const std::string Name(P->name());
    for (unsigned Seed = 1; Seed <= 10; ++Seed) {
      std::mt19937 Rng(Seed);
      World W(denseIds(40));
      W.HoldAcks = true;
      Controller C(*P, examples("compute_memory_pair.json"), W.Ids,
                   W.options());
      W.C = &C;
      C.addOpaque(tenant("cublas", 2, 2));
      C.addOpaque(tenant("stream_triad", 4, 4, 2.0));
      const char *Tenants[] = {"cublas", "stream_triad"};
      const char *Names[] = {"sgemm", "stream_triad", "other"};
      const int Total = 3 + static_cast<int>(Rng() % 3);
      int Arrived = 0, Clears = 0, Holds = 0;
      std::map<unsigned long long, bool> Notified, Departed;
      SmMask Held;
      for (int Step = 0; Step < 200000; ++Step) {
        if (Arrived < Total && (Step == 0 || Rng() % 8 == 0)) {
          ++Arrived;
          auto K = W.make(Arrived, Names[Rng() % 3], 20000 + Rng() % 20000);
          K->Started = true;
          C.onArrival(K);
          W.checkWrites(Held);
        }
        if (Rng() % 16 == 0) {
          // A launch boundary: the driver gives the target's worth of SMs.
          const char *T = Tenants[Rng() % 2];
          std::vector<unsigned> Ids = W.Ids;
          std::shuffle(Ids.begin(), Ids.end(), Rng);
          Ids.resize(C.opaqueTarget(T));
          bool Clear = C.holdOpaque(T, Ids);
          Held = W.held();
          W.checkWrites(Held);
          ++Holds;
          for (int Poll = 0; !Clear && Poll < 3; ++Poll) {
            for (auto &K : W.Kernels)
              if (!K->Applied && Rng() % 2)
                W.acknowledge(*K);
            Clear = C.holdOpaque(T, Ids);
            W.checkWrites(Held);
          }
          if (Clear) {
            ++Clears;
            for (auto &K : W.Kernels) {
              if (Departed[K->Id] || K->P.taken >= K->P.total)
                continue;
              auto [DevMask, DevPreempted] = W.Device[K->Id];
              if (!DevPreempted && (DevMask & maskOf(Ids)).any()) {
                ++W.Violations;
                ADD_FAILURE() << "kernel " << K->Id << " may still run on "
                              << "SMs of " << T << " at step " << Step;
              }
            }
          }
        }
        bool AllGone = Arrived == Total;
        for (auto &K : W.Kernels) {
          if (Departed[K->Id])
            continue;
          AllGone = false;
          if (!K->Applied && Rng() % 3 == 0)
            W.acknowledge(*K);
          K->advance();
          if (K->P.taken >= K->P.total && !Notified[K->Id]) {
            Notified[K->Id] = true;
            C.onLastBlockTaken(K->Id);
          } else if (Notified[K->Id]) {
            Departed[K->Id] = true;
            C.onDeparture(K->Id);
          }
          W.checkWrites(Held);
        }
        if (AllGone)
          break;
      }
      for (auto &K : W.Kernels)
        EXPECT_EQ(K->P.done, K->P.total) << Name << " seed " << Seed;
      EXPECT_EQ(W.Violations, 0) << Name << " seed " << Seed;
      EXPECT_GT(Holds, 0) << Name;
      EXPECT_GT(Clears, 0) << Name;
      EXPECT_TRUE(C.allocations().empty()) << Name;
    }
  }
}

TEST(Opaque, TraceShowsTargetsAndHolds) {
  char Tmpl[] = "/tmp/smpart_opaque_trace_XXXXXX";
  int Fd = mkstemp(Tmpl);
  ASSERT_GE(Fd, 0);
  close(Fd);
  const std::string Path = Tmpl;
  {
    std::string Err;
    auto T = trace::TraceWriter::open(Path, &Err);
    ASSERT_TRUE(T) << Err;
    World W(denseIds(8));
    ControllerOptions O = W.options();
    O.trace = T.get();
    Controller C(pol("even"), policy::ProfileSet{}, W.Ids, O);
    W.C = &C;
    auto A = W.make(1, "k", 100000);
    C.onArrival(A);
    C.addOpaque(tenant("cublas"));
    ASSERT_TRUE(C.holdOpaque("cublas", {0, 2, 4, 6}));
    ASSERT_TRUE(C.holdOpaque("cublas", {0, 2, 4, 6})); // no second event
    C.removeOpaque("cublas");
    ASSERT_TRUE(T->flush(&Err)) << Err;
  }
  std::ifstream In(Path);
  std::stringstream SS;
  SS << In.rdbuf();
  std::filesystem::remove(Path);
  const auto Doc = nlohmann::json::parse(SS.str());
  std::vector<nlohmann::json> Holds, Targets;
  bool Kinds = false, Inputs = false;
  for (const auto &E : Doc["traceEvents"]) {
    if (E["name"] == "opaque_hold")
      Holds.push_back(E["args"]);
    if (E["name"] == "opaque_target")
      Targets.push_back(E["args"]);
    if (E["name"] == "decision") {
      for (const auto &K : E["args"]["plan"]["kernels"])
        Kinds |= K["kind"] == "opaque";
      Inputs |= E["args"]["inputs"].contains("opaque");
    }
  }
  ASSERT_EQ(Holds.size(), 2u);
  EXPECT_EQ(Holds[0]["partition"], "cublas");
  EXPECT_EQ(Holds[0]["sm_ids"], nlohmann::json({0, 2, 4, 6}));
  EXPECT_EQ(Holds[0]["clear"], true);
  EXPECT_EQ(Holds[1]["sms"], 0); // removed
  ASSERT_GE(Targets.size(), 2u);
  EXPECT_EQ(Targets.front()["sms"], 4);
  EXPECT_EQ(Targets.back()["sms"], 0);
  EXPECT_TRUE(Kinds);
  EXPECT_TRUE(Inputs);
}

// Online policies plan the rewritten kernels over the SMs the partitions
// leave, at events and at epochs; the partitions' entries stay the
// controller's.
TEST(Opaque, OnlinePoliciesPlanAroundPartitions) {
  for (const online::OnlinePolicyInfo &Info : online::onlinePolicies()) {
    const std::string Name(Info.name);
    World W(denseIds(132));
    ControllerOptions O = W.options();
    policy::ProfileSet Prof = examples("compute_memory_pair.json");
    O.online = online::makeOnlinePolicy(Info, Prof, O.policy_options);
    Controller C(pol(std::string(Info.base)), Prof, W.Ids, O);
    W.C = &C;
    auto A = W.make(1, "sgemm", 50000000);
    auto B = W.make(2, "stream_triad", 50000000);
    C.onArrival(A);
    C.addOpaque(tenant("cublas", 8, 8));
    std::vector<unsigned> Ids;
    for (unsigned I = 0; I < C.opaqueTarget("cublas"); ++I)
      Ids.push_back(2 * I + 1);
    ASSERT_TRUE(C.holdOpaque("cublas", Ids)) << Name;
    C.onArrival(B);
    const SmMask Held = maskOf(Ids);
    double Now = 0;
    for (int E = 0; E < 40; ++E) {
      A->advance();
      B->advance();
      C.epoch(Now += 1000);
      W.checkWrites(Held);
    }
    EXPECT_EQ(W.Violations, 0) << Name;
    EXPECT_TRUE((rewrittenUnion(W) & Held).none()) << Name;
    const policy::Plan P = C.lastPlan();
    ASSERT_FALSE(P.kernels.empty()) << Name;
    EXPECT_EQ(P.kernels.back().kind, "opaque") << Name;
    EXPECT_EQ(P.num_sms, static_cast<int>(132 - Ids.size())) << Name;
    for (const std::string &Warning : W.Warnings)
      EXPECT_EQ(Warning.find("online"), std::string::npos) << Name << Warning;
  }
}

// A partition with a profile under its name is planned by a policy that
// partitions SMs as one more kernel: its target is the policy's decision
// for it (here on the whole GPU: a profiled kernel and the partition).
// Policies that share SMs leave it its weighted share, and say so.
TEST(Opaque, ProfiledPartitionIsPlannedByThePolicy) {
  for (const policy::Policy *P : policy::allPolicies()) {
    const std::string Name(P->name());
    World W(denseIds(132));
    const policy::ProfileSet Prof = examples("compute_compute_pair.json");
    Controller C(*P, Prof, W.Ids, W.options());
    W.C = &C;
    auto A = W.make(1, "sgemm", 1000000);
    C.onArrival(A);
    C.addOpaque(tenant("nbody"));
    // What the policy decides for the same two kernels.
    policy::ProfileSet Both = Prof;
    Both.kernels[0].total_blocks = 1000000;
    Both.kernels[0].executed_blocks = 0;
    const policy::Plan Want = P->decide(Both, {});
    bool Sharing = false;
    for (const std::string &N : C.lastPlan().notes)
      Sharing |= N.find("shares SMs") != std::string::npos;
    EXPECT_EQ(Sharing, Name == "greedy" || Name == "tlp") << Name;
    if (Sharing) {
      EXPECT_EQ(C.opaqueTarget("nbody"), 66u) << Name;
      continue;
    }
    ASSERT_EQ(Want.kernels.size(), 2u) << Name;
    EXPECT_EQ(C.opaqueTarget("nbody"),
              static_cast<unsigned>(std::max(1, Want.kernels[1].sms)))
        << Name;
  }
}
