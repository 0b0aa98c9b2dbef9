// Latency-critical co-location on the simulator (README "Latency-critical
// co-location"): a periodic stream of short high-priority kernels beside a
// long best-effort one. The plain priority mode and HSM-QoS online keep the
// stream's p99 within 1.25x of alone and the best-effort throughput at
// 60 % of alone or more; plain sharing (`even`) does not; the priority
// mode acts at the arrival's re-plan, holds the SMs until the kernel
// leaves and gives them back then; the controller's invariants hold.
#include "corun.hpp"
#include "latency.hpp"
#include "online_policies.hpp"
#include "online_test_support.hpp"
#include "priority_policy.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/curves.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace smpart;
using namespace smpart::sim;

namespace {

Mix latencyMix() { return smpart::sim::testing::mix("latency_critical"); }

void expectHealthy(const RunResult &R, const std::string &What) {
  EXPECT_TRUE(R.completed) << What;
  EXPECT_EQ(R.shared_sm_steps, 0u) << What;
  EXPECT_EQ(R.exactly_once_violations, 0u) << What;
}

LatencyReport run(const Mix &M, const std::string &Policy) {
  RunOptions O;
  O.spatial = isSpatialPolicy(Policy);
  const RunResult R = runPolicy(M, Policy, O);
  expectHealthy(R, Policy);
  return latencyOf(M, R);
}

TEST(LatencyCritical, MixIsAPeriodicStreamBesideBestEffortWork) {
  const Mix M = latencyMix();
  ASSERT_TRUE(hasLatencyCriticalStream(M));
  std::size_t Critical = 0;
  for (const Launch &L : M.launches)
    Critical += isLatencyCritical(M, L.kernel);
  EXPECT_GE(Critical, 20u);
  EXPECT_LT(Critical, M.launches.size());
  // A mix whose kernels run once has no stream.
  EXPECT_FALSE(hasLatencyCriticalStream(
      loadMix(std::string(SMPART_MIXES) + "/mc_sgemm_stream.json")));
}

TEST(LatencyCritical, PercentileIsNearestRank) {
  std::vector<double> V;
  for (int I = 100; I >= 1; --I)
    V.push_back(I);
  EXPECT_EQ(percentile(V, 50), 50);
  EXPECT_EQ(percentile(V, 99), 99);
  EXPECT_EQ(percentile({3, 1, 2}, 99), 3);
  EXPECT_EQ(percentile({}, 50), 0);
}

TEST(LatencyCritical, PriorityModeMeetsTheTargets) {
  const Mix M = latencyMix();
  const LatencyReport L = run(M, "priority");
  ASSERT_EQ(L.critical.size(), 1u);
  const LatencyStats &S = L.critical[0];
  EXPECT_EQ(S.launches, 40u);
  EXPECT_LE(S.p99Ratio(), LatencyTarget) << "p99 " << S.p99_us;
  EXPECT_GE(L.best_effort, ThroughputTarget);
  EXPECT_TRUE(L.meetsTargets());
  // Never faster than alone: the preemption latency is one chunk.
  EXPECT_GE(S.p50_us, S.alone_us + M.sim.ack_us * 0.9);
}

TEST(LatencyCritical, HsmQosOnlineMeetsTheTargets) {
  const LatencyReport L = run(latencyMix(), "hsm-qos-online");
  ASSERT_EQ(L.critical.size(), 1u);
  EXPECT_LE(L.critical[0].p99Ratio(), LatencyTarget);
  EXPECT_GE(L.best_effort, ThroughputTarget);
}

TEST(LatencyCritical, PlainSharingMissesTheLatencyTarget) {
  const LatencyReport L = run(latencyMix(), "even");
  ASSERT_EQ(L.critical.size(), 1u);
  EXPECT_GT(L.critical[0].p99Ratio(), 1.5 * LatencyTarget);
  EXPECT_FALSE(L.meetsTargets());
}

/// Records each re-plan the priority policy saw and what it applied.
using Watch = smpart::sim::testing::Watch<online::PriorityPolicy>;

const policy::KernelDecision *find(const policy::Plan &P, const char *Name) {
  for (const policy::KernelDecision &D : P.kernels)
    if (D.name == Name)
      return &D;
  return nullptr;
}

TEST(LatencyCritical, PriorityActsAtArrivalHoldsAndGivesBack) {
  const Mix M = latencyMix();
  auto Policy = std::make_shared<online::PriorityPolicy>(M.controller);
  auto W = std::make_shared<Watch>(Policy);
  RunOptions O;
  O.spatial = true;
  O.online = W;
  const RunResult R = runMix(M, *policy::findPolicy("even"), O);
  expectHealthy(R, "priority (watched)");
  const int N = M.truth.gpu.num_sms;
  const policy::KernelProfile *Infer = nullptr;
  for (const policy::KernelProfile &K : M.controller.kernels)
    if (K.name == "infer")
      Infer = &K;
  ASSERT_NE(Infer, nullptr);
  const int Need = Policy->neededSms(*Infer, N);
  // The fewest SMs within 5 % of its time on all of them: most of the GPU
  // for this compute-bound kernel, more than an even half.
  EXPECT_LE(policy::timeAtSms(*Infer, Need),
            1.05 * policy::timeAtSms(*Infer, N));
  EXPECT_GT(policy::timeAtSms(*Infer, Need - 1),
            1.05 * policy::timeAtSms(*Infer, N));
  EXPECT_GT(Need, N / 2);
  std::map<std::string, int> Seen;
  for (const Watch::Replan &E : W->Replans) {
    const policy::KernelDecision *I = find(E.applied, "infer");
    const policy::KernelDecision *S = find(E.applied, "sgemm");
    if (E.trigger == "arrival" && I && S) {
      // At its arrival: its SMs at once, the best-effort kernel the rest.
      EXPECT_TRUE(E.amended);
      EXPECT_EQ(I->sms, Need);
      EXPECT_EQ(S->sms, N - Need);
      ++Seen["arrival"];
    } else if (E.trigger == "last_block_taken" && !I && S) {
      // Finishing its last blocks: its SMs stay its own.
      ASSERT_EQ(E.finishing.size(), 1u);
      EXPECT_TRUE(E.amended);
      for (int Sm : E.finishing[0].sms)
        EXPECT_TRUE(Sm < S->sm_first || Sm >= S->sm_first + S->sms) << Sm;
      ++Seen["hold"];
    } else if (E.trigger == "departure" && !I && S && E.finishing.empty()) {
      // Gone: the best-effort kernel has every SM back.
      EXPECT_FALSE(E.amended);
      EXPECT_EQ(S->sms, N);
      ++Seen["back"];
    }
  }
  // Every launch that met the best-effort kernel went through all three.
  EXPECT_GE(Seen["arrival"], 20);
  EXPECT_EQ(Seen["hold"], Seen["arrival"]);
  EXPECT_GE(Seen["back"], Seen["arrival"]);
}

/// The mix's profiles, the latency-critical one without its SM curve
/// unless \p InferCurve.
policy::ProfileSet pair(bool InferCurve) {
  policy::ProfileSet Set = latencyMix().controller;
  if (!InferCurve)
    for (policy::KernelProfile &K : Set.kernels)
      if (K.name == "infer")
        K.by_sms.clear();
  return Set;
}

policy::Plan evenPlan(int N) {
  policy::Plan P;
  P.num_sms = N;
  P.policy = "even";
  for (const char *Name : {"sgemm", "infer"}) {
    policy::KernelDecision D;
    D.name = Name;
    D.sms = N / 2;
    P.kernels.push_back(D);
  }
  policy::layOutContiguously(P);
  return P;
}

TEST(LatencyCritical, WithoutACurveTheBestEffortKernelIsPreempted) {
  online::PriorityPolicy P(pair(false));
  const std::optional<policy::Plan> A =
      P.onReplan("arrival", evenPlan(132), {});
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernels[0].sms, 0);   // sgemm: preempted
  EXPECT_EQ(A->kernels[1].sms, 132); // infer: every SM
  // No high-priority kernel and none finishing: the offline plan stands.
  policy::Plan Alone = evenPlan(132);
  Alone.kernels.pop_back();
  EXPECT_FALSE(P.onReplan("departure", Alone, {}));
}

// A best-effort launch arriving while the high-priority kernel runs comes
// after it in the plan's (arrival) order; the plan must not move the
// high-priority kernel for that: a move preempts it and relaunches it.
TEST(LatencyCritical, BestEffortArrivalDoesNotMoveTheHighPriorityKernel) {
  online::PriorityPolicy P(pair(true));
  policy::Plan InferLast = evenPlan(132), InferFirst = evenPlan(132);
  std::swap(InferFirst.kernels[0], InferFirst.kernels[1]);
  policy::layOutContiguously(InferFirst);
  const std::optional<policy::Plan> A = P.onReplan("arrival", InferLast, {});
  const std::optional<policy::Plan> B = P.onReplan("arrival", InferFirst, {});
  ASSERT_TRUE(A && B);
  const policy::KernelDecision *IA = find(*A, "infer");
  const policy::KernelDecision *IB = find(*B, "infer");
  const policy::KernelDecision *SB = find(*B, "sgemm");
  ASSERT_TRUE(IA && IB && SB);
  EXPECT_GT(IA->sms, 0);
  EXPECT_EQ(IB->sms, IA->sms);
  EXPECT_EQ(IB->sm_first, IA->sm_first);
  EXPECT_EQ(IA->sm_first + IA->sms, 132); // the end of the GPU
  EXPECT_EQ(SB->sm_first, 0);
  EXPECT_EQ(SB->sms, 132 - IB->sms);
}

TEST(LatencyCritical, InterferenceOnItsOwnSmsPreemptsBestEffortOnce) {
  online::PriorityPolicy P(pair(true));
  EpochReport R;
  R.index = 3;
  EpochSample S;
  S.name = "sgemm";
  S.id = 1;
  S.sms = 6;
  S.ctas_per_sm = 4;
  S.steady = true;
  S.np = 1;
  R.kernels.push_back(S);
  S.name = "infer";
  S.id = 2;
  S.sms = 126;
  S.np = 0.8; // DRAM shared with the best-effort kernel
  R.kernels.push_back(S);
  const std::optional<policy::Plan> A = P.onEpoch(R, evenPlan(132));
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernels[0].sms, 0);
  EXPECT_EQ(A->kernels[1].sms, 132);
  EXPECT_EQ(P.exclusive().count("infer"), 1u);
  // Learned once; its next arrival preempts at once.
  EXPECT_FALSE(P.onEpoch(R, evenPlan(132)));
  const std::optional<policy::Plan> Next =
      P.onReplan("arrival", evenPlan(132), {});
  ASSERT_TRUE(Next);
  EXPECT_EQ(Next->kernels[0].sms, 0);
  // At its isolated rate nothing changes.
  online::PriorityPolicy Q(pair(true));
  R.kernels[1].np = 0.99;
  EXPECT_FALSE(Q.onEpoch(R, evenPlan(132)));
}

TEST(LatencyCritical, SelectableByName) {
  const online::OnlinePolicyInfo *I = online::findOnlinePolicy("priority");
  ASSERT_NE(I, nullptr);
  EXPECT_EQ(I->base, "even");
  std::vector<unsigned> Sms(132);
  for (unsigned S = 0; S < 132; ++S)
    Sms[S] = S;
  const std::string Mixes = SMPART_MIXES;
  const std::string Path = Mixes + "/latency_critical.json";
  controller::EnvConfig C = controller::configureFromEnvironment(
      [&](const char *Name) -> const char * {
        if (std::string(Name) == "SMPART_POLICY")
          return "priority";
        if (std::string(Name) == "SMPART_PROFILES")
          return Path.c_str();
        return nullptr;
      },
      Sms);
  ASSERT_TRUE(C.error.empty()) << C.error;
  ASSERT_TRUE(C.controller);
  EXPECT_EQ(C.controller->policy().name(), "even");
}

} // namespace
