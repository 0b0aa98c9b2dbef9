// Epochs of measurement (controller_epoch.hpp): samples, learned isolated
// rates, the online-policy hook and its safety, the trace, SMPART_EPOCH_US.
#include "fake_kernel.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace smpart;
using smpart::testing::Env;
using smpart::testing::FakeKernel;

namespace {

const std::string Examples = SMPART_POLICY_EXAMPLES;

std::vector<unsigned> denseIds(unsigned N) {
  std::vector<unsigned> V;
  for (unsigned I = 0; I < N; ++I)
    V.push_back(I);
  return V;
}

ControllerOptions quiet(std::vector<std::string> *Warnings = nullptr) {
  ControllerOptions O;
  O.warn = [Warnings](const std::string &W) {
    if (Warnings)
      Warnings->push_back(W);
  };
  return O;
}

/// sgemm (occupancy 4) and stream_triad (occupancy 8) under `even` on 132
/// SMs: 66 SMs each.
struct Pair {
  std::vector<unsigned> Ids = denseIds(132);
  std::shared_ptr<FakeKernel> A, B;
  std::unique_ptr<Controller> C;
  explicit Pair(ControllerOptions O = quiet()) {
    C = std::make_unique<Controller>(
        *policy::findPolicy("even"),
        policy::loadProfiles(Examples + "/compute_memory_pair.json"), Ids,
        std::move(O));
    A = std::make_shared<FakeKernel>(1, "sgemm", 20000, 4, Ids, nullptr);
    B = std::make_shared<FakeKernel>(2, "stream_triad", 100000, 8, Ids,
                                     nullptr);
    C->onArrival(A);
    C->onArrival(B);
  }
};

TEST(Epochs, SampleBlocksRateNormalisedProgressAndSamplingPeriod) {
  Pair P;
  P.C->epoch(0); // opens
  EXPECT_EQ(P.C->lastEpoch().index, 0u);
  P.A->advance(); // 66 SMs x 4 CTAs
  P.B->advance(); // 66 x 8
  P.B->advance();
  P.C->epoch(1000);
  EpochReport R = P.C->lastEpoch();
  ASSERT_EQ(R.kernels.size(), 2u);
  EXPECT_EQ(R.index, 1u);
  EXPECT_DOUBLE_EQ(R.start_us, 0);
  EXPECT_DOUBLE_EQ(R.end_us, 1000);
  const EpochSample &S = R.kernels[0];
  EXPECT_EQ(S.name, "sgemm");
  EXPECT_EQ(S.sms, 66u);
  EXPECT_EQ(S.ctas_per_sm, 4u);
  EXPECT_EQ(S.blocks, 264u);
  EXPECT_DOUBLE_EQ(S.rate, 0.264);
  EXPECT_TRUE(S.steady);
  EXPECT_FALSE(S.alone);
  // Isolated at 66 SMs x 4 CTAs (its occupancy): by_sms says 20 ms for
  // 20000 blocks, 1 block/us.
  EXPECT_EQ(S.isolated_source, IsolatedSource::Profile);
  EXPECT_NEAR(S.isolated_rate, 1.0, 1e-9);
  EXPECT_NEAR(S.np, 0.264, 1e-9);
  // 264 resident CTAs finish a generation of blocks every 264 / 0.264 us.
  EXPECT_NEAR(S.sampling_period_us, 1000, 1e-6);
  const EpochSample &T = R.kernels[1];
  EXPECT_EQ(T.blocks, 2u * 66 * 8);
  // stream_triad at 66 SMs with its 8 CTAs: 10 ms x 10.8 / 10.8.
  EXPECT_NEAR(T.isolated_rate, 100000 / 10000.0, 1e-9);
  EXPECT_NEAR(T.sampling_period_us, 66.0 * 8 / (2 * 66 * 8 / 1000.0), 1e-6);
  EXPECT_EQ(T.epochs, 1u);
}

TEST(Epochs, IsolatedRateIsPerBlockWhateverTheLaunchesGrid) {
  Pair P;
  // A second sgemm launch with twice the profiled grid: same blocks per us.
  auto Big = std::make_shared<FakeKernel>(3, "sgemm", 40000, 4, P.Ids, nullptr);
  P.C->onDeparture(2);
  P.C->onArrival(Big);
  P.C->epoch(0);
  Big->advance();
  P.A->advance();
  P.C->epoch(1000);
  EpochReport R = P.C->lastEpoch();
  ASSERT_EQ(R.kernels.size(), 2u);
  EXPECT_EQ(R.kernels[0].sms, R.kernels[1].sms);
  EXPECT_EQ(R.kernels[1].total, 40000u);
  EXPECT_NEAR(R.kernels[1].isolated_rate, R.kernels[0].isolated_rate, 1e-12);
  EXPECT_NEAR(R.kernels[1].isolated_rate, 1.0, 1e-9); // 20000 blocks, 20 ms
}

TEST(Epochs, AKnobWriteMakesTheEpochUnsteady) {
  std::vector<unsigned> Ids = denseIds(8);
  Controller C(*policy::findPolicy("even"), {}, Ids, quiet());
  auto A = std::make_shared<FakeKernel>(1, "a", 1000000, 2, Ids, nullptr);
  C.onArrival(A);
  C.epoch(0);
  A->advance();
  C.epoch(100);
  EXPECT_TRUE(C.lastEpoch().kernels[0].steady);
  auto B = std::make_shared<FakeKernel>(2, "b", 1000000, 2, Ids, nullptr);
  C.onArrival(B); // a shrinks to 4 SMs mid-epoch
  A->advance();
  C.epoch(200);
  EpochReport R = C.lastEpoch();
  ASSERT_EQ(R.kernels.size(), 2u);
  EXPECT_FALSE(R.kernels[0].steady);
  EXPECT_FALSE(R.kernels[0].alone);
  EXPECT_FALSE(R.kernels[1].steady); // its first epoch
  A->advance();
  C.epoch(300);
  EXPECT_TRUE(C.lastEpoch().kernels[0].steady);
}

TEST(Epochs, IsolatedRateIsLearnedAloneAndKeptForTheNextLaunch) {
  std::vector<unsigned> Ids = denseIds(8);
  Controller C(*policy::findPolicy("even"), {}, Ids, quiet());
  auto A = std::make_shared<FakeKernel>(1, "solo", 1000000, 2, Ids, nullptr);
  C.onArrival(A);
  C.epoch(0);
  A->advance(); // 8 SMs x 2 CTAs = 16 blocks
  C.epoch(100);
  EpochSample S = C.lastEpoch().kernels[0];
  EXPECT_TRUE(S.alone);
  EXPECT_EQ(S.isolated_source, IsolatedSource::Learned);
  EXPECT_NEAR(S.isolated_rate, 0.16, 1e-12);
  EXPECT_NEAR(S.np, 1.0, 1e-12);
  // Half the speed at the same allocation (a co-runner outside smpart,
  // say): NP halves; the rate learned alone moves only in steady epochs
  // when it is alone, which this one also is, by half the difference.
  A->P.taken += 8;
  A->P.done = A->P.taken;
  C.epoch(200);
  S = C.lastEpoch().kernels[0];
  EXPECT_NEAR(S.rate, 0.08, 1e-12);
  EXPECT_NEAR(S.isolated_rate, 0.12, 1e-12);
  C.onDeparture(1);
  // A second launch of the same kernel, alone on the same SMs: its first
  // epoch already knows the isolated rate.
  auto A2 = std::make_shared<FakeKernel>(2, "solo", 1000000, 2, Ids, nullptr);
  C.onArrival(A2);
  A2->advance();
  C.epoch(300);
  S = C.lastEpoch().kernels[0];
  EXPECT_FALSE(S.steady);
  EXPECT_EQ(S.isolated_source, IsolatedSource::Learned);
  EXPECT_NEAR(S.isolated_rate, 0.12, 1e-12);
  // Never measured at 4 SMs alone, and no profile: unknown.
  auto B = std::make_shared<FakeKernel>(3, "other", 1000000, 2, Ids, nullptr);
  C.onArrival(B);
  A2->advance();
  C.epoch(400);
  S = C.lastEpoch().kernels[0];
  EXPECT_EQ(S.sms, 4u);
  EXPECT_EQ(S.isolated_source, IsolatedSource::None);
  EXPECT_EQ(S.np, 0);
}

TEST(Epochs, AloneMeansNoOtherKernelAndNoOpaquePartitionHoldingSms) {
  // An opaque partition's kernels share the memory bandwidth: an epoch
  // in which one held SMs, even briefly, measures no isolated rate.
  std::vector<unsigned> Ids = denseIds(8);
  Controller C(*policy::findPolicy("even"), {}, Ids, quiet());
  auto A = std::make_shared<FakeKernel>(1, "solo", 1000000, 2, Ids, nullptr);
  C.onArrival(A);
  OpaqueTenant T;
  T.name = "library";
  C.addOpaque(T);
  C.epoch(0);
  A->advance();
  C.holdOpaque("library", {6, 7});
  C.holdOpaque("library", {}); // released within the epoch
  C.epoch(100);
  EXPECT_FALSE(C.lastEpoch().kernels[0].alone);
  A->advance();
  C.epoch(200);
  EXPECT_TRUE(C.lastEpoch().kernels[0].steady);
  EXPECT_TRUE(C.lastEpoch().kernels[0].alone);
  C.holdOpaque("library", {7}); // held at the epoch's end
  A->advance();
  C.epoch(300);
  EXPECT_FALSE(C.lastEpoch().kernels[0].alone);
}

TEST(Epochs, AKernelWhoseSmsAwaitAnAcknowledgementIsNotPreemptedByThePlan) {
  Pair P;
  P.C->onDeparture(2);
  P.C->epoch(0);
  // sgemm holds every SM and does not acknowledge: a newcomer's SMs wait.
  P.A->Applied = false;
  auto B = std::make_shared<FakeKernel>(3, "stream_triad", 100000, 8, P.Ids,
                                        nullptr);
  P.C->onArrival(B);
  ASSERT_EQ(P.C->pendingGrants(), 1u);
  P.A->advance();
  P.C->epoch(1000);
  EpochSample S = P.C->lastEpoch().kernels[1];
  EXPECT_TRUE(S.preempted);
  EXPECT_TRUE(S.awaiting_sms);
  EXPECT_FALSE(P.C->lastEpoch().kernels[0].awaiting_sms);
  P.A->Applied = true;
  P.C->onKnobsApplied(1);
  B->advance();
  P.C->epoch(2000);
  S = P.C->lastEpoch().kernels[1];
  EXPECT_FALSE(S.preempted);
  EXPECT_FALSE(S.awaiting_sms);
}

TEST(Epochs, KernelsWhoseLastBlockWasTakenAreNotReported) {
  Pair P;
  P.C->epoch(0);
  P.A->P.taken = P.A->P.total;
  P.C->epoch(100);
  EpochReport R = P.C->lastEpoch();
  ASSERT_EQ(R.kernels.size(), 1u);
  EXPECT_EQ(R.kernels[0].name, "stream_triad");
}

/// Moves SMs from the first kernel to the second at a chosen epoch.
class Mover : public OnlinePolicy {
public:
  std::string_view name() const override { return "mover"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &Current) override {
    Reports.push_back(R);
    CurrentPolicies.push_back(Current.policy);
    if (R.index != MoveAt)
      return std::nullopt;
    policy::Plan P;
    P.mode = "test";
    P.notes = {"phase=search metric=np decision=move"};
    for (std::size_t I = 0; I < R.kernels.size(); ++I) {
      policy::KernelDecision D;
      D.name = R.kernels[I].name;
      D.sm_first = I == 0 ? 0 : 30;
      D.sms = I == 0 ? 30 : 102;
      D.ctas_per_sm = I == 0 ? FirstCtas : 0;
      if (!Valid)
        D.sms += 200;
      P.kernels.push_back(D);
    }
    if (Swapped)
      std::swap(P.kernels[0].name, P.kernels[1].name);
    return P;
  }
  unsigned long long MoveAt = 2;
  int FirstCtas = 0;
  bool Valid = true;
  /// Names the report's kernels in the other order (each decision would
  /// land on the other kernel).
  bool Swapped = false;
  std::vector<EpochReport> Reports;
  std::vector<std::string> CurrentPolicies;
};

TEST(Epochs, OnlinePlanIsAppliedAndItsSmsWaitForTheAcknowledgement) {
  auto M = std::make_shared<Mover>();
  ControllerOptions O = quiet();
  O.online = M;
  Pair P(O);
  P.C->epoch(0);
  P.C->epoch(1000);
  ASSERT_EQ(M->Reports.size(), 1u);
  EXPECT_EQ(M->Reports[0].kernels.size(), 2u);
  EXPECT_EQ(M->CurrentPolicies[0], "even");
  EXPECT_EQ(P.B->Mask.count(), 66u);
  // The first kernel has not acknowledged when the step comes: its SMs
  // 30..65 do not go to the second one yet.
  P.A->Applied = false;
  const unsigned long long Before = P.C->deferredGrants();
  P.C->epoch(2000);
  EXPECT_EQ(P.C->lastPlan().policy, "mover");
  EXPECT_EQ(P.A->Mask.count(), 30u);
  EXPECT_EQ(P.B->Mask.count(), 66u);
  EXPECT_EQ((P.A->Mask & P.B->Mask).count(), 0u);
  EXPECT_EQ(P.C->deferredGrants(), Before + 1);
  EXPECT_EQ(P.C->pendingGrants(), 1u);
  P.A->Applied = true;
  P.C->onKnobsApplied(1);
  EXPECT_EQ(P.B->Mask.count(), 102u);
  EXPECT_EQ((P.A->Mask & P.B->Mask).count(), 0u);
  // The step was a knob write: the next epoch is not steady for either.
  P.C->epoch(3000);
  EXPECT_FALSE(P.C->lastEpoch().kernels[0].steady);
  EXPECT_FALSE(P.C->lastEpoch().kernels[1].steady);
  EXPECT_EQ(M->Reports.size(), 3u);
}

// A kernel that took its last block left the plan then; when it departs
// later, the online policy's plan for the kernels left stands. An offline
// re-plan there would undo the online search (back to `even`) with
// nothing changed.
TEST(Epochs, DepartureOfAKernelOutOfThePlanKeepsTheOnlinePlan) {
  auto M = std::make_shared<Mover>();
  ControllerOptions O = quiet();
  O.online = M;
  Pair P(O);
  auto X =
      std::make_shared<FakeKernel>(3, "stream_triad", 1000, 8, P.Ids, nullptr);
  P.C->onArrival(X);
  X->P.taken = X->P.total;
  P.C->onLastBlockTaken(3);
  P.C->epoch(0);
  P.C->epoch(1000);
  P.C->epoch(2000); // the step: 30 SMs and 102
  ASSERT_EQ(P.C->lastPlan().policy, "mover");
  ASSERT_EQ(P.A->Mask.count(), 30u);
  ASSERT_EQ(P.B->Mask.count(), 102u);
  const unsigned long long Decisions = P.C->decisionCount();
  P.C->onDeparture(3);
  EXPECT_EQ(P.C->lastPlan().policy, "mover");
  EXPECT_EQ(P.C->decisionCount(), Decisions);
  EXPECT_EQ(P.A->Mask.count(), 30u);
  EXPECT_EQ(P.B->Mask.count(), 102u);
  // A kernel still in the plan that departs re-plans as before.
  P.C->onDeparture(2);
  EXPECT_EQ(P.C->decisionCount(), Decisions + 1);
  EXPECT_EQ(P.A->Mask.count(), 132u);
}

TEST(Epochs, CtasPerSmScaleTheIsolatedRateThroughTheCtaCurve) {
  auto M = std::make_shared<Mover>();
  M->MoveAt = 1;
  M->FirstCtas = 2;
  ControllerOptions O = quiet();
  O.online = M;
  Pair P(O);
  P.C->epoch(0);
  P.C->epoch(1000); // sgemm: 30 SMs x 2 CTAs
  P.A->advance();
  P.C->epoch(2000);
  EpochSample S = P.C->lastEpoch().kernels[0];
  EXPECT_EQ(S.sms, 30u);
  EXPECT_EQ(S.ctas_per_sm, 2u);
  EXPECT_EQ(S.blocks, 60u);
  // by_sms at 30 SMs (interpolated through the origin below 33: 40 ms x
  // 33 / 30), times by_ctas 16 ms at 2 CTAs over 10 ms at its 4.
  EXPECT_NEAR(S.isolated_rate, 20000 / (40.0 * 33 / 30 * 16 / 10 * 1000), 1e-9);
  EXPECT_NEAR(S.sampling_period_us, 1000, 1e-6);
}

// A plan past the SMs, or naming the report's kernels in another order
// (its decisions apply by position), keeps the knobs with one warning.
TEST(Epochs, MisshapenOnlinePlanKeepsTheKnobsAndWarnsOnce) {
  for (const bool Swapped : {false, true}) {
    SCOPED_TRACE(Swapped ? "kernels out of order" : "SMs past the GPU");
    auto M = std::make_shared<Mover>();
    M->Valid = Swapped;
    M->Swapped = Swapped;
    M->MoveAt = 1;
    std::vector<std::string> Warnings;
    ControllerOptions O = quiet(&Warnings);
    O.online = M;
    Pair P(O);
    const unsigned long long Decisions = P.C->decisionCount();
    P.C->epoch(0);
    P.C->epoch(1000);
    M->MoveAt = 2;
    P.C->epoch(2000);
    EXPECT_EQ(P.C->decisionCount(), Decisions);
    EXPECT_EQ(P.A->Mask.count(), 66u);
    ASSERT_EQ(Warnings.size(), 1u);
    EXPECT_NE(Warnings[0].find("online policy mover"), std::string::npos);
    EXPECT_NE(Warnings[0].find("in the report's order"), std::string::npos);
  }
}

TEST(Epochs, TraceHoldsEachEpochAndTheOnlineDecision) {
  namespace fs = std::filesystem;
  const std::string Path =
      (fs::temp_directory_path() /
       ("smpart-epoch-" + std::to_string(getpid()) + ".json"))
          .string();
  std::string Err;
  auto W = trace::TraceWriter::open(Path, &Err);
  ASSERT_TRUE(W) << Err;
  W->setFlushIntervalMs(-1);
  auto M = std::make_shared<Mover>();
  ControllerOptions O = quiet();
  O.trace = W.get();
  O.online = M;
  Pair P(O);
  P.C->epoch(0);
  P.A->advance();
  P.C->epoch(1000);
  P.C->epoch(2000);
  ASSERT_TRUE(W->flush(&Err)) << Err;
  std::ifstream In(Path);
  nlohmann::json Doc = nlohmann::json::parse(In);
  int Epochs = 0, Counters = 0, OnlineDecisions = 0;
  for (const nlohmann::json &E : Doc["traceEvents"]) {
    if (E["name"] == "epoch") {
      ++Epochs;
      const nlohmann::json &K = E["args"]["kernels"][0];
      EXPECT_EQ(K["kernel"], "sgemm");
      if (E["args"]["index"] == 1) {
        EXPECT_EQ(K["blocks"], 264);
        EXPECT_NEAR(K["np"].get<double>(), 0.264, 1e-9);
        EXPECT_EQ(K["isolated_source"], "profile");
        EXPECT_NEAR(K["profile_rate"].get<double>(), 1.0, 1e-9);
        EXPECT_EQ(K["awaiting_sms"], false);
        EXPECT_NEAR(K["sampling_period_us"].get<double>(), 1000, 1e-6);
      }
    }
    if (E["name"] == "np sgemm #1" && E["ph"] == "C")
      ++Counters;
    if (E["name"] == "decision" && E["args"]["trigger"] == "epoch") {
      ++OnlineDecisions;
      EXPECT_EQ(E["args"]["policy"], "mover");
      EXPECT_EQ(E["args"]["notes"][0], "phase=search metric=np decision=move");
    }
  }
  EXPECT_EQ(Epochs, 2);
  EXPECT_EQ(Counters, 2);
  EXPECT_EQ(OnlineDecisions, 1);
  std::remove(Path.c_str());
}

TEST(Epochs, WithoutAnOnlinePolicyEpochsAreTracedSparsely) {
  std::string Err;
  auto W = trace::TraceWriter::open(
      (std::filesystem::temp_directory_path() /
       ("smpart-epoch-sparse-" + std::to_string(getpid()) + ".json"))
          .string(),
      &Err);
  ASSERT_TRUE(W) << Err;
  W->setFlushIntervalMs(-1);
  ControllerOptions O = quiet();
  O.trace = W.get();
  O.trace_epoch_us = 5000;
  Pair P(O);
  const std::size_t Before = W->eventCount();
  for (int I = 0; I <= 20; ++I)
    P.C->epoch(I * 1000.0); // 20 epochs over 20 ms
  // Epochs ending at 1, 6, 11 and 16 ms: an instant and two counters each.
  EXPECT_EQ(W->eventCount() - Before, 4u * 3);
  EXPECT_EQ(P.C->lastEpoch().index, 20u);
  std::remove(W->path().c_str());
}

TEST(Epochs, EpochLengthComesFromTheEnvironment) {
  Env E;
  E.Vars = {{"SMPART_POLICY", "even"}};
  auto C = controller::configureFromEnvironment(E.fn(), denseIds(4));
  ASSERT_TRUE(C.controller) << C.error;
  EXPECT_EQ(C.controller->epochUs(), DefaultEpochUs);
  E.Vars["SMPART_EPOCH_US"] = "2500";
  C = controller::configureFromEnvironment(E.fn(), denseIds(4));
  ASSERT_TRUE(C.controller) << C.error;
  EXPECT_EQ(C.controller->epochUs(), 2500);
  for (const char *Bad : {"abc", "50", "1e9", "", "100us"}) {
    E.Vars["SMPART_EPOCH_US"] = Bad;
    C = controller::configureFromEnvironment(E.fn(), denseIds(4));
    EXPECT_FALSE(C.active()) << Bad;
    EXPECT_NE(C.error.find("SMPART_EPOCH_US=" + std::string(Bad) +
                           ": expected the epoch length in microseconds"),
              std::string::npos)
        << C.error;
  }
}

/// Amends the offline plan of the second arrival (sgemm 30 SMs, the rest
/// to stream_triad); hands the first back unchanged, under its own name.
class Amender : public OnlinePolicy {
public:
  std::string_view name() const override { return "amender"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &,
                                      const policy::Plan &) override {
    return std::nullopt;
  }
  std::optional<policy::Plan>
  onReplan(std::string_view, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &) override {
    policy::Plan P = Offline;
    P.policy = "amender";
    if (P.kernels.size() == 2) {
      P.kernels[0].sms = 30;
      P.kernels[1].sm_first = 30;
      P.kernels[1].sms = 102;
      P.notes.push_back("amended");
    }
    return P;
  }
};

TEST(Epochs, DecisionNamesTheOnlinePolicyThatAmendedTheReplan) {
  namespace fs = std::filesystem;
  const std::string Path =
      (fs::temp_directory_path() /
       ("smpart-epoch-amend-" + std::to_string(getpid()) + ".json"))
          .string();
  std::string Err;
  auto W = trace::TraceWriter::open(Path, &Err);
  ASSERT_TRUE(W) << Err;
  W->setFlushIntervalMs(-1);
  ControllerOptions O = quiet();
  O.trace = W.get();
  O.online = std::make_shared<Amender>();
  Pair P(O);
  EXPECT_EQ(P.C->lastPlan().policy, "amender");
  EXPECT_EQ(P.A->Mask.count(), 30u);
  ASSERT_TRUE(W->flush(&Err)) << Err;
  std::ifstream In(Path);
  nlohmann::json Doc = nlohmann::json::parse(In);
  std::vector<std::string> Policies, PlanPolicies;
  for (const nlohmann::json &E : Doc["traceEvents"])
    if (E["name"] == "decision" && E["args"]["trigger"] == "arrival") {
      Policies.push_back(E["args"]["policy"]);
      PlanPolicies.push_back(E["args"]["plan"]["policy"]);
    }
  // The first arrival's plan came back unchanged: the offline policy's.
  EXPECT_EQ(Policies, (std::vector<std::string>{"even", "amender"}));
  EXPECT_EQ(PlanPolicies, (std::vector<std::string>{"even", "amender"}));
  std::remove(Path.c_str());
}

} // namespace
