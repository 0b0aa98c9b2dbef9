#include "fake_kernel.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace smpart;
using smpart::testing::Call;
using smpart::testing::Env;
using smpart::testing::FakeKernel;

namespace {

const std::string Examples = SMPART_POLICY_EXAMPLES;

policy::ProfileSet examples(const char *Name) {
  return policy::loadProfiles(Examples + "/" + Name);
}

std::vector<unsigned> denseIds(unsigned N) {
  std::vector<unsigned> V;
  for (unsigned I = 0; I < N; ++I)
    V.push_back(I);
  return V;
}

// 10 SMs whose %smid values are not dense (as on real GPUs with disabled
// TPCs), given out of order.
const std::vector<unsigned> SparseIds = {21, 1, 3, 4, 7, 8, 9, 12, 15, 20};

struct World {
  std::vector<Call> Log;
  std::vector<std::shared_ptr<FakeKernel>> Kernels;
  std::vector<std::string> Warnings;
  std::vector<unsigned> Ids;
  bool Spatial = true;
  int Violations = 0;

  explicit World(std::vector<unsigned> SmIds) : Ids(std::move(SmIds)) {}

  std::shared_ptr<FakeKernel> make(unsigned long long Id, const std::string &N,
                                   unsigned long long Total, unsigned Occ = 8) {
    auto K = std::make_shared<FakeKernel>(Id, N, Total, Occ, Ids, &Log);
    K->OnMaskWrite = [this] { checkDisjoint(); };
    Kernels.push_back(K);
    return K;
  }
  // Spatial policies: the SM overlap between kernels that can still take
  // blocks never grows with a knob write, and is zero once an event has been
  // handled (settled()). A kernel launched before the controller hears of
  // it runs on every SM, so its arrival starts with overlap; the runtime
  // removes that window by telling the controller before the first CTA.
  std::size_t overlap() const {
    std::size_t O = 0;
    for (std::size_t I = 0; I < Kernels.size(); ++I)
      for (std::size_t J = I + 1; J < Kernels.size(); ++J) {
        auto &A = *Kernels[I], &B = *Kernels[J];
        if (A.Preempted || B.Preempted || A.P.taken >= A.P.total ||
            B.P.taken >= B.P.total || !A.Started || !B.Started)
          continue;
        O += (A.Mask & B.Mask).count();
      }
    return O;
  }
  std::size_t LastOverlap = 0;
  void checkDisjoint() {
    if (!Spatial)
      return;
    std::size_t O = overlap();
    if (O > LastOverlap)
      ++Violations;
    LastOverlap = O;
  }
  /// Call before handing the controller an event.
  void beforeEvent() { LastOverlap = overlap(); }
  /// Call after the controller handled an event.
  void settled() {
    if (Spatial && overlap() != 0)
      ++Violations;
    LastOverlap = 0;
  }
  ControllerOptions options() {
    ControllerOptions O;
    O.warn = [this](const std::string &W) { Warnings.push_back(W); };
    return O;
  }
};

SmMask maskOf(std::initializer_list<unsigned> Ids) {
  SmMask M;
  for (unsigned I : Ids)
    M.set(I);
  return M;
}

const policy::Policy &pol(const char *Name) {
  const policy::Policy *P = policy::findPolicy(Name);
  EXPECT_NE(P, nullptr) << Name;
  return *P;
}

/// A kernel starts and arrives; the world checks every knob write of the
/// event (see World::beforeEvent / settled).
template <class K> void arrive(World &W, Controller &C, const K &Kernel) {
  Kernel->Started = true;
  W.beforeEvent();
  C.onArrival(Kernel);
  W.settled();
}

TEST(Controller, FirstKernelGetsEveryRealSm) {
  World W(SparseIds);
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 1000);
  arrive(W, C, A);
  EXPECT_EQ(A->Mask, maskOf({1, 3, 4, 7, 8, 9, 12, 15, 20, 21}));
  EXPECT_EQ(C.decisionCount(), 1u);
  EXPECT_TRUE(W.Warnings.empty());
}

TEST(Controller, ArrivalSplitsRealIdsDisjointlyAndDepartureGivesThemBack) {
  World W(SparseIds);
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 1000);
  auto B = W.make(2, "stream_triad", 1000);
  arrive(W, C, A);
  W.Log.clear();
  B->Started = true; // launched on every SM before the controller hears of it
  W.beforeEvent();
  C.onArrival(B);
  W.settled();
  // even: first kernel gets ordinals [0,5), second [5,10), over sorted ids.
  EXPECT_EQ(A->Mask, maskOf({1, 3, 4, 7, 8}));
  EXPECT_EQ(B->Mask, maskOf({9, 12, 15, 20, 21}));
  // A only shrank: no grow; B shrank from "all" too.
  for (const Call &Cl : W.Log)
    EXPECT_NE(Cl.what, "grow") << Cl.id;
  // Disjoint after every write once both had been told (B was launched on
  // all SMs, so the very first write to A is checked against B = all).
  W.Log.clear();
  W.Violations = 0;
  W.beforeEvent();
  C.onDeparture(2);
  W.settled();
  EXPECT_EQ(A->Mask, maskOf({1, 3, 4, 7, 8, 9, 12, 15, 20, 21}));
  bool Grew = false;
  for (const Call &Cl : W.Log)
    Grew |= Cl.id == 1 && Cl.what == "grow";
  EXPECT_TRUE(Grew) << "a kernel that gains SMs is grown";
  ASSERT_EQ(C.allocations().size(), 1u);
}

TEST(Controller, ShrinkHappensBeforeAnyGrowAcrossKernels) {
  // cd-search on the pair: sgemm 84, stream_triad 48 of 132 SMs. Start from
  // even (66/66) by arriving under a different order of events, then ask for
  // a re-plan: every mask write that removes SMs precedes every write that
  // adds SMs.
  World W(denseIds(132));
  Controller C(pol("cd-search"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 100000);
  auto B = W.make(2, "stream_triad", 100000);
  arrive(W, C, A);
  arrive(W, C, B);
  EXPECT_EQ(W.Violations, 0);
  EXPECT_EQ(A->Mask.count(), 84u);
  EXPECT_EQ(B->Mask.count(), 48u);
  EXPECT_FALSE((A->Mask & B->Mask).any());
  EXPECT_TRUE(A->Mask.test(0));   // first kernel from SM 0
  EXPECT_TRUE(B->Mask.test(131)); // second up to the last
  // Plan's ctas_per_sm applied (sgemm 4, stream_triad 8 in the example plan).
  EXPECT_EQ(A->Ctas, 4u);
  EXPECT_EQ(B->Ctas, 8u);
}

/// The SMs the last plan gives \p Name (dense ids: ordinal == id).
SmMask planned(const Controller &C, const std::string &Name) {
  for (const policy::KernelDecision &D : C.lastPlan().kernels)
    if (D.name == Name)
      return smRange(static_cast<unsigned>(D.sm_first),
                     static_cast<unsigned>(D.sms));
  ADD_FAILURE() << Name << " is not in the last plan";
  return {};
}

bool called(const std::vector<Call> &Log, unsigned long long Id,
            const std::string &What) {
  for (const Call &Cl : Log)
    if (Cl.id == Id && Cl.what == What)
      return true;
  return false;
}

TEST(Controller, SmsMoveOnlyOnceTheShrunkKernelAcknowledged) {
  World W(denseIds(8));
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 1000000);
  arrive(W, C, A);
  // A's device has not applied the shrink yet: its CTAs may still take
  // blocks on the SMs the plan gives the newcomer.
  A->Applied = false;
  auto B = W.make(2, "stream_triad", 1000000);
  W.Log.clear();
  C.onArrival(B); // announced before its first CTA (Started stays false)
  EXPECT_EQ(A->Mask, planned(C, "sgemm"));
  EXPECT_TRUE(B->Preempted) << "B may run nowhere until A acknowledged";
  EXPECT_EQ(C.pendingGrants(), 1u);
  EXPECT_EQ(C.deferredGrants(), 1u);
  // An acknowledgement of someone else's knobs changes nothing.
  C.onKnobsApplied(2);
  EXPECT_TRUE(B->Preempted);
  EXPECT_EQ(C.pendingGrants(), 1u);

  A->Applied = true;
  W.Log.clear();
  C.onKnobsApplied(1);
  EXPECT_FALSE(B->Preempted);
  EXPECT_EQ(B->Mask, planned(C, "stream_triad"));
  EXPECT_FALSE((A->Mask & B->Mask).any());
  EXPECT_TRUE(called(W.Log, 2, "resume"));
  EXPECT_FALSE(called(W.Log, 1, "setKnobs")) << "A is not touched again";
  EXPECT_EQ(C.pendingGrants(), 0u);
  EXPECT_EQ(C.deferredGrants(), 1u);
}

TEST(Controller, AcknowledgedSmsAreGrantedAtOnceTheRestLater) {
  // even over 8 SMs: A and B hold halves; a third kernel D arrives and the
  // shares become 3/3/2. A acknowledges at once, B does not: B grows onto
  // the SM A gave up, D waits (preempted) for the SMs B gives up.
  World W(denseIds(8));
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 1000000);
  auto B = W.make(2, "stream_triad", 1000000);
  arrive(W, C, A);
  arrive(W, C, B);
  const SmMask BBefore = B->Mask;
  B->Applied = false;
  auto D = W.make(3, "mystery", 1000000);
  W.Log.clear();
  C.onArrival(D);
  const SmMask ToA = planned(C, "sgemm"), ToB = planned(C, "stream_triad"),
               ToD = planned(C, "mystery");
  ASSERT_TRUE((ToD & BBefore).any()) << "the scenario needs D to take B's SMs";
  EXPECT_EQ(A->Mask, ToA);
  EXPECT_EQ(B->Mask, ToB) << "SMs A acknowledged go to B at once";
  ASSERT_TRUE((ToB & ~BBefore).any()) << "the scenario needs B to gain an SM";
  EXPECT_TRUE(called(W.Log, 2, "grow"));
  EXPECT_TRUE(D->Preempted);
  EXPECT_EQ(C.pendingGrants(), 1u);

  B->Applied = true;
  C.onKnobsApplied(2);
  EXPECT_FALSE(D->Preempted);
  EXPECT_EQ(D->Mask, ToD);
  EXPECT_FALSE((A->Mask & D->Mask).any() || (B->Mask & D->Mask).any());
  EXPECT_EQ(C.pendingGrants(), 0u);
}

// The grant waiting for a kernel that finishes instead of acknowledging
// goes out at its departure; without a queued successor the re-plan then
// gives the newcomer every SM, with one the departed kernel's half waits
// for that launch.
TEST(Controller, DepartureFreesWhatTheKernelWasStillLeaving) {
  for (const bool Successor : {false, true}) {
    SCOPED_TRACE(Successor ? "successor queued" : "no successor");
    World W(denseIds(8));
    Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
                 W.options());
    auto A = W.make(1, "sgemm", 1000000);
    arrive(W, C, A);
    A->Applied = false; // never acknowledges: it finishes instead
    auto B = W.make(2, "stream_triad", 1000000);
    C.onArrival(B);
    EXPECT_TRUE(B->Preempted);
    C.onDeparture(1, Successor);
    EXPECT_FALSE(B->Preempted);
    EXPECT_EQ(B->Mask.count(), Successor ? 4u : 8u);
    EXPECT_EQ(C.pendingGrants(), 0u);
  }
}

TEST(Controller, LastBlockTakenLeavesThePlanAndKeepsItsKnobs) {
  World W(SparseIds);
  Controller C(pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 1000);
  auto B = W.make(2, "stream_triad", 1000);
  arrive(W, C, A);
  arrive(W, C, B);
  SmMask AMask = A->Mask;
  A->P.taken = 1000; // all blocks taken, some still running
  W.beforeEvent();
  C.onLastBlockTaken(1);
  W.settled();
  EXPECT_EQ(A->Mask, AMask);
  EXPECT_EQ(B->Mask.count(), 10u);
  auto Allocs = C.allocations();
  ASSERT_EQ(Allocs.size(), 2u);
  EXPECT_TRUE(Allocs[0].last_block_taken);
}

/// A long sgemm (kernel 1) and a short stream_triad (kernel 2) under even,
/// both arrived: the short one's stream may have its next launch queued.
struct LongBesideShort {
  World W{SparseIds};
  Controller C{pol("even"), examples("compute_memory_pair.json"), W.Ids,
               W.options()};
  std::shared_ptr<FakeKernel> Long = W.make(1, "sgemm", 1000000),
                              Short = W.make(2, "stream_triad", 1000);
  LongBesideShort() {
    arrive(W, C, Long);
    arrive(W, C, Short);
  }
};

// Other work between two launches of a stream (an event wait on another
// stream, a copy) can hold the queued next launch back for long: the SMs
// its predecessor left wait for it one whole epoch at most.
TEST(Controller, AQueuedSuccessorIsWaitedForOneEpochAtMost) {
  LongBesideShort T;
  World &W = T.W;
  Controller &C = T.C;
  const auto &Long = T.Long, &First = T.Short;
  const SmMask LongMask = Long->Mask;
  C.epoch(0);
  First->P.taken = 1000;
  C.onLastBlockTaken(2, /*SuccessorQueued=*/true);
  C.onDeparture(2, /*SuccessorQueued=*/true);
  C.epoch(1000); // closes the epoch the departure fell in
  EXPECT_EQ(Long->Mask, LongMask);
  C.epoch(2000); // a whole epoch without the next launch
  EXPECT_EQ(Long->Mask.count(), SparseIds.size());
  EXPECT_EQ(W.Violations, 0);
  // A later arrival re-plans as usual, and nothing is awaited any more.
  auto Next = W.make(3, "stream_triad", 1000);
  arrive(W, C, Next);
  const SmMask Settled = Long->Mask;
  C.epoch(3000);
  C.epoch(4000);
  EXPECT_EQ(Long->Mask, Settled);
}

TEST(Controller, StreamSuccessorTakesItsPredecessorsSmsWithoutAWait) {
  LongBesideShort T;
  World &W = T.W;
  Controller &C = T.C;
  const auto &Long = T.Long, &First = T.Short;
  const SmMask LongMask = Long->Mask, StreamMask = First->Mask;
  ASSERT_EQ(StreamMask.count(), 5u);
  // The stream's next launch is queued behind First: neither First's last
  // block nor its departure hands its SMs to Long, which would have to
  // give them back (and be waited for) when the next launch arrives.
  W.Log.clear();
  First->P.taken = 1000;
  C.onLastBlockTaken(2, /*SuccessorQueued=*/true);
  EXPECT_EQ(Long->Mask, LongMask);
  C.onDeparture(2, /*SuccessorQueued=*/true);
  EXPECT_EQ(Long->Mask, LongMask);
  EXPECT_TRUE(W.Log.empty()) << "no knob write before the next launch";
  auto Next = W.make(3, "stream_triad", 1000);
  arrive(W, C, Next);
  EXPECT_FALSE(Next->Preempted);
  EXPECT_EQ(Next->Mask, StreamMask);
  EXPECT_EQ(Long->Mask, LongMask);
  EXPECT_EQ(C.pendingGrants(), 0u);
  EXPECT_EQ(W.Violations, 0);
  // Without a queued launch the departure gives the SMs back at once.
  Next->P.taken = 1000;
  C.onLastBlockTaken(3);
  C.onDeparture(3);
  EXPECT_EQ(Long->Mask.count(), 10u);
}

TEST(Controller, UnprofiledKernelGetsEvenShareAndOneWarning) {
  World W(denseIds(12));
  Controller C(pol("cd-search"), examples("compute_memory_pair.json"), W.Ids,
               W.options());
  auto A = W.make(1, "sgemm", 100000);
  auto U1 = W.make(2, "mystery", 100);
  auto U2 = W.make(3, "mystery", 100);
  arrive(W, C, A);
  arrive(W, C, U1);
  arrive(W, C, U2);
  EXPECT_EQ(W.Violations, 0);
  // 12 SMs / 3 kernels: the unprofiled ones hold the last two even shares.
  EXPECT_EQ(U1->Mask.count(), 4u);
  EXPECT_EQ(U2->Mask.count(), 4u);
  EXPECT_EQ(A->Mask.count(), 4u);
  EXPECT_TRUE(U2->Mask.test(11));
  int NoProfile = 0;
  for (const std::string &S : W.Warnings)
    NoProfile += S.find("'mystery' has no profile") != std::string::npos;
  EXPECT_EQ(NoProfile, 1);
}

TEST(Controller, WarningsAreBoundedForAServiceThatRunsForEver) {
  // A tenant that names every launch anew: one warning per name, up to
  // the bound, then one that says the rest are not given.
  World W(denseIds(12));
  Controller C(pol("even"), policy::ProfileSet{}, W.Ids, W.options());
  for (unsigned long long I = 1; I <= 1500; ++I) {
    C.onArrival(W.make(I, "k" + std::to_string(I), 100));
    C.onDeparture(I);
  }
  ASSERT_EQ(W.Warnings.size(), 1025u);
  EXPECT_NE(W.Warnings[1023].find("'k1024' has no profile"), std::string::npos);
  EXPECT_EQ(W.Warnings.back(), "more than 1024 warnings; the rest are not "
                               "given");
}

TEST(Controller, SharingPolicyGivesAllSmsAndSplitsCtas) {
  World W(denseIds(132));
  W.Spatial = false;
  auto Profiles = examples("compute_memory_pair.json");
  Controller C(pol("greedy"), Profiles, W.Ids, W.options());
  auto A = W.make(1, "sgemm", 100000, 8);
  auto B = W.make(2, "stream_triad", 100000, 8);
  arrive(W, C, A);
  arrive(W, C, B);
  EXPECT_EQ(A->Mask.count(), 132u);
  EXPECT_EQ(B->Mask.count(), 132u);
  policy::Plan P = C.lastPlan();
  ASSERT_EQ(P.kernels.size(), 2u);
  EXPECT_EQ(A->Ctas,
            static_cast<unsigned>(std::min(P.kernels[0].ctas_per_sm, 8)));
  EXPECT_EQ(B->Ctas,
            static_cast<unsigned>(std::min(P.kernels[1].ctas_per_sm, 8)));
  EXPECT_GE(A->Ctas, 1u);
}

// A re-plan writes each kernel's knobs whole: at most one setKnobs in the
// shrink step and one in the grow step, never a mask, a CTA count and a
// bypass count as separate writes (the device would run mixes of two plans
// between them).
TEST(Controller, EachReplanStepIsOneKnobWritePerKernel) {
  for (const char *Policy : {"even", "greedy", "cd-search"}) {
    World W(denseIds(16));
    W.Spatial = std::string(Policy) != "greedy";
    Controller C(pol(Policy), examples("compute_memory_pair.json"), W.Ids,
                 W.options());
    auto A = W.make(1, "sgemm", 1000000, 8);
    auto B = W.make(2, "stream_triad", 1000000, 8);
    auto D = W.make(3, "mystery", 1000000, 8);
    for (const auto &K : {A, B, D}) {
      W.Log.clear();
      arrive(W, C, K);
      std::map<unsigned long long, int> Writes;
      for (const Call &Cl : W.Log) {
        EXPECT_NE(Cl.what, "setSmMask") << Policy;
        EXPECT_NE(Cl.what, "setCtasPerSm") << Policy;
        EXPECT_NE(Cl.what, "setBypassCtasPerSm") << Policy;
        EXPECT_NE(Cl.what, "preempt") << Policy;
        Writes[Cl.id] += Cl.what == "setKnobs";
      }
      for (const auto &[Id, N] : Writes)
        EXPECT_LE(N, 2) << Policy << ": kernel " << Id;
    }
    EXPECT_TRUE(called(W.Log, 1, "setKnobs") || called(W.Log, 2, "setKnobs"))
        << Policy << ": the third arrival re-planned the others";
  }
}

TEST(Controller, PolicyMissingInputsFallsBackToEvenWithOneWarning) {
  World W(denseIds(8));
  // HSM needs each kernel's shared-mode sample: without one it cannot
  // decide.
  policy::ProfileSet Set = examples("compute_compute_pair.json");
  for (policy::KernelProfile &K : Set.kernels)
    K.shared.reset();
  Controller C(pol("hsm-fair"), Set, W.Ids, W.options());
  auto A = W.make(1, "sgemm", 1000);
  auto B = W.make(2, "nbody", 1000);
  arrive(W, C, A);
  arrive(W, C, B);
  W.beforeEvent();
  C.replan();
  W.settled();
  EXPECT_EQ(A->Mask.count(), 4u);
  EXPECT_EQ(B->Mask.count(), 4u);
  EXPECT_EQ(C.lastPlan().policy, "hsm-fair->even");
  ASSERT_EQ(W.Warnings.size(), 1u);
  EXPECT_NE(W.Warnings[0].find("shared: missing"), std::string::npos)
      << W.Warnings[0];
}

/// Two SMs and three unprofiled kernels under even, arrived in order: the
/// third waits preempted.
struct ThreeKernelsOnTwoSms {
  World W{denseIds(2)};
  Controller C{pol("even"), policy::ProfileSet{}, W.Ids, W.options()};
  std::shared_ptr<FakeKernel> A = W.make(1, "a", 100), B = W.make(2, "b", 100),
                              K3 = W.make(3, "c", 100);
  ThreeKernelsOnTwoSms() {
    arrive(W, C, A);
    arrive(W, C, B);
    arrive(W, C, K3);
  }
};

TEST(Controller, MoreKernelsThanSmsQueueByPreemptionAndResume) {
  ThreeKernelsOnTwoSms T;
  EXPECT_TRUE(T.K3->Preempted);
  EXPECT_FALSE(T.A->Preempted);
  EXPECT_EQ(T.W.Violations, 0);
  T.W.beforeEvent();
  T.C.onDeparture(1);
  T.W.settled();
  EXPECT_FALSE(T.K3->Preempted);
  EXPECT_EQ(T.K3->Mask.count(), 1u);
  EXPECT_FALSE((T.K3->Mask & T.B->Mask).any());
}

TEST(Controller, AQueuedSuccessorDoesNotKeepAPreemptedKernelWaiting) {
  // A's stream has its next launch queued, but that launch might wait for
  // the preempted third kernel (an event): A's last block and departure
  // re-plan as before.
  ThreeKernelsOnTwoSms T;
  ASSERT_TRUE(T.K3->Preempted);
  T.A->P.taken = 100;
  T.C.onLastBlockTaken(1, /*SuccessorQueued=*/true);
  EXPECT_FALSE(T.K3->Preempted) << "the last block's re-plan gave it A's SM";
  T.C.onDeparture(1, /*SuccessorQueued=*/true);
  EXPECT_FALSE(T.K3->Preempted);
  EXPECT_EQ(T.K3->Mask.count(), 1u);
}

TEST(Controller, ProgressFeedsThePolicyAndTheTrace) {
  namespace fs = std::filesystem;
  std::string Path = (fs::temp_directory_path() /
                      ("smpart-ctl-" + std::to_string(getpid()) + ".json"))
                         .string();
  auto T = trace::TraceWriter::open(Path, nullptr);
  ASSERT_TRUE(T);
  World W(denseIds(132));
  W.Spatial = false;
  ControllerOptions O = W.options();
  O.trace = T.get();
  Controller C(pol("greedy"), examples("compute_memory_pair.json"), W.Ids, O);
  auto A = W.make(1, "sgemm", 12000);
  auto B = W.make(2, "stream_triad", 12000);
  arrive(W, C, A);
  A->P.done = A->P.taken = 9000;
  arrive(W, C, B);
  ASSERT_TRUE(T->flush());
  std::ifstream In(Path);
  std::stringstream SS;
  SS << In.rdbuf();
  auto Doc = nlohmann::json::parse(SS.str(), nullptr, false);
  ASSERT_FALSE(Doc.is_discarded());
  const nlohmann::json *Last = nullptr;
  int Decisions = 0;
  for (const auto &E : Doc["traceEvents"])
    if (E["name"] == "decision") {
      Last = &E;
      ++Decisions;
    }
  ASSERT_EQ(Decisions, 2);
  const auto &Inputs = (*Last)["args"]["inputs"]["kernels"];
  EXPECT_EQ(Inputs[0]["executed_blocks"], 9000);
  EXPECT_EQ(Inputs[0]["total_blocks"], 12000);
  EXPECT_EQ((*Last)["args"]["trigger"], "arrival");
  EXPECT_EQ((*Last)["args"]["plan"]["schema"], "smpart.plan/1");
  // Greedy (SiM Alg. 1) serves the largest remaining time first: with 3/4
  // of sgemm done, stream_triad gets at least as many CTAs per SM.
  policy::Plan P = C.lastPlan();
  EXPECT_GE(P.kernels[1].ctas_per_sm, P.kernels[0].ctas_per_sm);
  std::remove(Path.c_str());
}

// A randomised co-run: kernels arrive over time, run at a rate proportional
// to what they hold, notify last-block-taken and depart. Under every spatial
// policy the masks of kernels still taking blocks never overlap, every
// kernel finishes, and the SMs of departed kernels go to the others.
TEST(Controller, RandomCoRunsUnderEveryPolicy) {
  for (const policy::Policy *P : policy::allPolicies()) {
    const std::string Name(P->name());
    const bool Spatial = Name != "greedy" && Name != "tlp";
    for (unsigned Seed = 1; Seed <= 20; ++Seed) {
      std::mt19937 Rng(Seed);
      World W(denseIds(132));
      W.Spatial = Spatial;
      Controller C(*P, examples("compute_memory_pair.json"), W.Ids,
                   W.options());
      const char *Names[] = {"sgemm", "stream_triad", "other"};
      int Arrived = 0;
      const int Total = 2 + static_cast<int>(Rng() % 3);
      std::map<unsigned long long, bool> Notified, Departed;
      for (int Step = 0; Step < 100000; ++Step) {
        if (Arrived < Total && (Step == 0 || Rng() % 4 == 0)) {
          ++Arrived;
          auto K = W.make(Arrived, Names[Rng() % 3], 20000 + Rng() % 20000);
          arrive(W, C, K);
        }
        bool AllGone = Arrived == Total;
        for (auto &K : W.Kernels) {
          if (Departed[K->Id])
            continue;
          AllGone = false;
          K->advance();
          if (K->P.taken >= K->P.total && !Notified[K->Id]) {
            Notified[K->Id] = true;
            W.beforeEvent();
            C.onLastBlockTaken(K->Id);
            W.settled();
          } else if (Notified[K->Id]) {
            Departed[K->Id] = true;
            W.beforeEvent();
            C.onDeparture(K->Id);
            W.settled();
          }
        }
        if (AllGone)
          break;
      }
      for (auto &K : W.Kernels)
        EXPECT_EQ(K->P.done, K->P.total) << Name << " seed " << Seed;
      EXPECT_EQ(W.Violations, 0) << Name << " seed " << Seed;
      EXPECT_TRUE(C.allocations().empty()) << Name;
    }
  }
}

// ---- environment ----

TEST(Environment, NothingSetMeansInactiveAndNoError) {
  Env E;
  auto C = controller::configureFromEnvironment(E.fn(), denseIds(4));
  EXPECT_TRUE(C.error.empty());
  EXPECT_FALSE(C.active());
}

TEST(Environment, InvalidSettingsGiveOneLineAndActivateNothing) {
  std::vector<std::pair<std::map<std::string, std::string>, std::string>>
      Cases = {
          {{{"SMPART_POLICY", "fastest"}},
           "SMPART_POLICY=fastest: unknown policy (one of: even"},
          {{{"SMPART_PROFILES", Examples + "/compute_memory_pair.json"}},
           "SMPART_PROFILES is set but SMPART_POLICY is not"},
          {{{"SMPART_POLICY", "cd-search"}}, "needs SMPART_PROFILES"},
          {{{"SMPART_POLICY", "even"},
            {"SMPART_PROFILES", "/nonexistent/p.json"}},
           "SMPART_PROFILES: /nonexistent/p.json: No such file or directory"},
          {{{"SMPART_POLICY", "even"},
            {"SMPART_PROFILES", Examples + "/compute_memory_plan.json"}},
           "schema: expected \"smpart.profiles/1\""},
          {{{"SMPART_POLICY", "even"}, {"SMPART_TRACE", "/nonexistent/t.json"}},
           "SMPART_TRACE: trace: cannot write '/nonexistent/t.json'"},
          {{{"SMPART_PROFILE", "/nonexistent/out.json"}},
           "SMPART_PROFILE=/nonexistent/out.json"},
          {{{"SMPART_PROFILE", "out.json"}, {"SMPART_POLICY", "even"}},
           "SMPART_PROFILE measures kernels alone"},
      };
  for (auto &[Vars, Expect] : Cases) {
    Env E;
    E.Vars = Vars;
    auto C = controller::configureFromEnvironment(E.fn(), denseIds(132));
    EXPECT_NE(C.error.find(Expect), std::string::npos) << C.error;
    EXPECT_EQ(C.error.find('\n'), std::string::npos);
    EXPECT_NE(C.error.find("running without the controller"),
              std::string::npos);
    EXPECT_FALSE(C.active()) << C.error;
    EXPECT_EQ(trace::global(), nullptr);
  }
}

TEST(Environment, UnknownSmIdsAreNamedAsSuch) {
  // A GPU busy with another process: the SM-id probe never saw every SM.
  Env E;
  E.Vars = {{"SMPART_POLICY", "even"}};
  auto C = controller::configureFromEnvironment(E.fn(), {});
  EXPECT_NE(C.error.find("SMPART_POLICY=even: the GPU's SM ids are unknown"),
            std::string::npos)
      << C.error;
  EXPECT_NE(C.error.find("running without the controller"), std::string::npos);
  EXPECT_FALSE(C.active());
  // Profiling needs them as much: a sweep over no SMs has no step (and
  // once divided by that count).
  E.Vars = {{"SMPART_PROFILE", "profiles.json"}};
  C = controller::configureFromEnvironment(E.fn(), {});
  EXPECT_NE(C.error.find("SMPART_PROFILE=profiles.json: the GPU's SM ids are "
                         "unknown"),
            std::string::npos)
      << C.error;
  EXPECT_FALSE(C.active());
}

TEST(Environment, ATraceOntoTheProfilesIsRefused) {
  // The trace is written over its file: onto the profiles it would
  // replace them (also through a symlink).
  namespace fs = std::filesystem;
  const fs::path Dir =
      fs::temp_directory_path() / ("smpart-env-in-" + std::to_string(getpid()));
  fs::create_directories(Dir);
  const fs::path Profiles = Dir / "profiles.json";
  fs::copy_file(Examples + "/compute_memory_pair.json", Profiles,
                fs::copy_options::overwrite_existing);
  fs::create_symlink(Profiles, Dir / "link.json");
  for (const fs::path &Trace : {Profiles, Dir / "link.json"}) {
    Env E;
    E.Vars = {{"SMPART_POLICY", "cd-search"},
              {"SMPART_PROFILES", Profiles.string()},
              {"SMPART_TRACE", Trace.string()}};
    auto C = controller::configureFromEnvironment(E.fn(), denseIds(132));
    EXPECT_NE(C.error.find("is the SMPART_PROFILES file; the trace would "
                           "replace it"),
              std::string::npos)
        << C.error;
    EXPECT_FALSE(C.active());
  }
  EXPECT_NO_THROW(policy::loadProfiles(Profiles.string())); // intact
  fs::remove_all(Dir);
}

TEST(Environment, ValidSettingsBuildTheControllerAndTrace) {
  namespace fs = std::filesystem;
  std::string Path = (fs::temp_directory_path() /
                      ("smpart-env-" + std::to_string(getpid()) + ".json"))
                         .string();
  Env E;
  E.Vars = {{"SMPART_POLICY", "cd-search"},
            {"SMPART_PROFILES", Examples + "/compute_memory_pair.json"},
            {"SMPART_TRACE", Path}};
  auto C = controller::configureFromEnvironment(E.fn(), denseIds(132));
  ASSERT_TRUE(C.error.empty()) << C.error;
  ASSERT_TRUE(C.controller);
  EXPECT_EQ(C.controller->policy().name(), "cd-search");
  EXPECT_TRUE(C.trace);
  ASSERT_NE(trace::global(), nullptr);
  EXPECT_EQ(trace::global()->path(), Path);
  trace::setGlobal(nullptr);
  EXPECT_TRUE(fs::exists(Path));
  std::remove(Path.c_str());
}

} // namespace
