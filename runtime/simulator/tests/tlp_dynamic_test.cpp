// Dynamic TLP modulation and bypass learning on the simulator: convergence
// within 10 epochs, the hysteresis bound, bypass learning where bypassing
// pays, better than the offline tlp policy where Alg. 1's profile is wrong,
// the controller's invariants under its steps and selection by name.
// Figures: simulator README.
#include "bundled_mixes.hpp"
#include "corun.hpp"
#include "online_policies.hpp"
#include "online_test_support.hpp"
#include "static_search.hpp"
#include "tlp_dynamic_policy.hpp"

#include "smpart/controller.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace smpart;
using namespace smpart::sim;

namespace {

const std::string Mixes = SMPART_MIXES;

using smpart::sim::testing::AllMixes;
using smpart::sim::testing::expectChangeBound;
using smpart::sim::testing::expectConvergedWithin;
using smpart::sim::testing::mix;
using Watch = smpart::sim::testing::Watch<online::TlpDynamicPolicy>;
using OnlineRun = smpart::sim::testing::OnlineRun<online::TlpDynamicPolicy>;

/// The cache-sensitive + streaming mix with the controller told that the
/// streaming kernel's best TLP is \p Opt CTAs per SM (Alg. 1 then gives it
/// Opt and kmeans the rest); the model keeps the truth.
Mix withStreamOpt(int Opt, double ProfileError = 0) {
  Mix M = mix("mc_kmeans_stream", ProfileError);
  for (policy::KernelProfile &K : M.controller.kernels)
    if (K.name == "stream_triad")
      K.metrics.opt_ctas_per_sm = Opt;
  return M;
}

OnlineRun runOnline(const Mix &M, bool Bypass = true) {
  online::TlpDynamicOptions TO;
  TO.bypass_learning = Bypass;
  OnlineRun R;
  R.watch = std::make_shared<Watch>(
      std::make_shared<online::TlpDynamicPolicy>(M.controller, TO));
  RunOptions O;
  O.online = R.watch;
  R.result = runMix(M, *policy::findPolicy("tlp"), O);
  return R;
}

RunResult runOffline(const Mix &M) {
  return runMix(M, *policy::findPolicy("tlp"), RunOptions{});
}

/// Mixes whose kernels start together.
const char *const PairMixes[] = {"mc_sgemm_stream", "mm_stream_lbm",
                                 "cc_sgemm_conv", "mc_kmeans_stream",
                                 "three_sgemm_stream_spmv"};

TEST(TlpDynamic, ConvergesWithinTenEpochsOfEveryKernelSet) {
  int Checked = 0;
  for (const char *Name : PairMixes)
    for (double Error : {0.0, 0.3}) {
      const OnlineRun R = runOnline(mix(Name, Error));
      ASSERT_TRUE(R.result.completed) << Name;
      Checked += expectConvergedWithin(
          R.watch->Log, 10, Name + (" error " + std::to_string(Error)));
    }
  EXPECT_GE(Checked, 6);
}

TEST(TlpDynamic, AtMostTwoKnobChangesPerKernelPerTenEpochsOnceConverged) {
  auto KnobsChanged = [](const EpochSample &A, const EpochSample &B) {
    return A.ctas_per_sm != B.ctas_per_sm ||
           A.bypass_ctas_per_sm != B.bypass_ctas_per_sm;
  };
  int Converged = 0;
  for (const char *Name : AllMixes)
    for (double Error : {0.0, 0.3}) {
      const OnlineRun R = runOnline(mix(Name, Error));
      Converged +=
          expectChangeBound(R.watch->Log, KnobsChanged, 10, 2,
                            Name + (" error " + std::to_string(Error)));
    }
  EXPECT_GT(Converged, 50); // the bound was checked on converged epochs
}

TEST(TlpDynamic, BypassLearningBypassesTheStreamingKernelWhereItPays) {
  // Alg. 1 with opt(stream_triad) = 1: kmeans, cache-sensitive, holds 7 of
  // the 8 CTA slots and the streaming CTA pollutes its L1. Steps 2-3 find
  // that bypassing the streaming kernel beats bypassing none and kmeans.
  const Mix M = withStreamOpt(1);
  const OnlineRun With = runOnline(M, true);
  const OnlineRun Without = runOnline(M, false);
  unsigned StreamBypass = 0, KmeansBypass = 0;
  for (const Watch::Entry &E : With.watch->Log)
    if (E.converged && *E.converged < E.report.index)
      for (const EpochSample &S : E.report.kernels) {
        (S.name == "stream_triad" ? StreamBypass : KmeansBypass) =
            S.bypass_ctas_per_sm;
      }
  EXPECT_GT(StreamBypass, 0u);
  EXPECT_EQ(KmeansBypass, 0u);
  for (const Watch::Entry &E : Without.watch->Log)
    for (const EpochSample &S : E.report.kernels)
      EXPECT_EQ(S.bypass_ctas_per_sm, 0u) << "epoch " << E.report.index;
  EXPECT_GT(With.result.metrics.stp, Without.result.metrics.stp);
  // On the bundled mix Alg. 1 gives the streaming kernel 6 of 8 slots:
  // there its own lost hits cost more than kmeans gains (README), and
  // learning keeps every CTA caching.
  const OnlineRun Bundled = runOnline(mix("mc_kmeans_stream"), true);
  for (const Watch::Entry &E : Bundled.watch->Log) {
    if (!E.converged || *E.converged == E.report.index)
      continue; // that epoch measured the last trial
    for (const EpochSample &S : E.report.kernels)
      EXPECT_EQ(S.bypass_ctas_per_sm, 0u) << S.name;
  }
}

TEST(TlpDynamic, BeatsOfflineTlpWhereAlgOnesProfileIsWrong) {
  // opt(stream_triad) profiled at 3 CTAs/SM where the model's best sharing
  // gives it 4-6: the static start is off, the measured trend corrects it.
  const Mix M = withStreamOpt(3);
  const RunResult Offline = runOffline(M);
  const OnlineRun Online = runOnline(M);
  EXPECT_GT(Online.result.metrics.stp, 1.05 * Offline.metrics.stp);
  // Profiles 30 % wrong as well (misprofile()): never worse than offline.
  const Mix Wrong = withStreamOpt(3, 0.3);
  EXPECT_GE(runOnline(Wrong).result.metrics.stp,
            0.99 * runOffline(Wrong).metrics.stp);
}

TEST(TlpDynamic, JudgesAKernelSetThatComesBackByItsThroughputNow) {
  // Memory + compute with the kernel that finishes first launched again
  // (a program's loop): the co-run does not end when stream_triad does,
  // so the STP projected for a single run misjudges the steps. Once the
  // set came back, steps are judged by the weighted speedup measured now,
  // and the policy gets within 5 % of the best configuration sharing SMs.
  // On cache-sensitive + streaming that takes a step past the flip of the
  // critical pipeline (kmeans 3 -> 4 CTAs per SM), where a co-run that
  // ends stops.
  for (const char *Name : {"mc_sgemm_stream", "mc_kmeans_stream"}) {
    const Mix M = mix(Name);
    RunOptions O;
    O.relaunch = true;
    const std::optional<StaticRun> Best = searchBestStatic(M, O).sharing;
    ASSERT_TRUE(Best) << Name;
    O.online = std::make_shared<online::TlpDynamicPolicy>(M.controller);
    const RunResult R = runMix(M, *policy::findPolicy("tlp"), O);
    ASSERT_TRUE(R.completed) << Name;
    EXPECT_GT(R.relaunches, 0u) << Name;
    EXPECT_GE(R.metrics.stp, 0.95 * Best->result.metrics.stp)
        << Name << ": " << Best->config.describe();
  }
}

/// Forwards to the policy under test, with every kernel's measured rate
/// scaled by \p Scale from the second epoch after it first converged on:
/// a lasting drop (a program phase change).
class PhaseChange final
    : public smpart::sim::testing::Forwarding<online::TlpDynamicPolicy> {
public:
  PhaseChange(std::shared_ptr<online::TlpDynamicPolicy> P, double Scale)
      : Forwarding(std::move(P)), Scale(Scale) {}
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &C) override {
    if (!DropAt && Inner->convergedAt())
      DropAt = *Inner->convergedAt() + 2;
    EpochReport Seen = R;
    if (DropAt && R.index >= *DropAt) {
      if (!StepsAtDrop)
        StepsAtDrop = Inner->steps();
      for (EpochSample &S : Seen.kernels)
        S.rate *= Scale;
    }
    std::optional<policy::Plan> P = Inner->onEpoch(Seen, C);
    if (StepsAtDrop && Inner->steps() > *StepsAtDrop && !RelearntAt &&
        Inner->phase() == online::TlpDynamicPolicy::Phase::Converged)
      RelearntAt = R.index;
    return P;
  }

  double Scale;
  std::optional<unsigned long long> DropAt, StepsAtDrop, RelearntAt;
};

TEST(TlpDynamic, LearnsAgainAfterALastingDropWithinTheChangeBudget) {
  // Converging spends the knob changes of the last epochs; the drop makes
  // it learn again at once, and the steps that the budget refuses wait
  // for it instead of ending the learning.
  Mix M = mix("mc_sgemm_stream");
  for (Launch &L : M.launches) // long enough to learn twice
    for (const policy::KernelProfile &K : M.truth.kernels)
      if (K.name == L.kernel && K.total_blocks)
        L.blocks = 8.0 * static_cast<double>(*K.total_blocks);
  auto P = std::make_shared<PhaseChange>(
      std::make_shared<online::TlpDynamicPolicy>(M.controller), 0.6);
  RunOptions O;
  O.online = P;
  const RunResult R = runMix(M, *policy::findPolicy("tlp"), O);
  ASSERT_TRUE(R.completed);
  ASSERT_TRUE(P->StepsAtDrop) << "never converged";
  EXPECT_GT(P->Inner->steps(), *P->StepsAtDrop) << "no step after the drop";
  EXPECT_TRUE(P->RelearntAt) << "did not converge again";
}

TEST(TlpDynamic, InvariantsHoldUnderItsSteps) {
  unsigned long long Steps = 0;
  for (const char *Name : AllMixes)
    for (double Error : {0.0, 0.3}) {
      const OnlineRun R = runOnline(mix(Name, Error));
      EXPECT_TRUE(R.result.completed) << Name;
      EXPECT_EQ(R.result.exactly_once_violations, 0u) << Name;
      // Its steps change CTAs and bypassing only: no SM changes hands, so
      // every SM move stays the offline policy's, under the
      // acknowledgement rule.
      for (const Watch::Entry &E : R.watch->Log) {
        if (!E.plan)
          continue;
        ASSERT_EQ(E.plan->kernels.size(), E.report.kernels.size());
        for (std::size_t K = 0; K < E.report.kernels.size(); ++K)
          EXPECT_EQ(E.plan->kernels[K].sms,
                    static_cast<int>(E.report.kernels[K].sms))
              << Name << " epoch " << E.report.index;
      }
      Steps += R.watch->Inner->steps();
    }
  EXPECT_GT(Steps, 0u);
}

TEST(TlpDynamic, SelectableByNameInTheEnvironment) {
  const std::string Profiles = Mixes + "/mc_kmeans_stream.json";
  std::vector<unsigned> Sms;
  for (unsigned I = 0; I < 132; ++I)
    Sms.push_back(I);
  auto Env = [&](const char *Name) -> const char * {
    if (std::string(Name) == "SMPART_POLICY")
      return "tlp-dynamic";
    if (std::string(Name) == "SMPART_PROFILES")
      return Profiles.c_str();
    return nullptr;
  };
  controller::EnvConfig C = controller::configureFromEnvironment(Env, Sms);
  ASSERT_TRUE(C.error.empty()) << C.error;
  ASSERT_TRUE(C.controller);
  // Arrivals are planned by Alg. 1 (the offline tlp policy) ...
  EXPECT_EQ(C.controller->policy().name(), "tlp");
  // ... and the epochs by this policy.
  const online::OnlinePolicyInfo *Info =
      online::findOnlinePolicy("tlp-dynamic");
  ASSERT_NE(Info, nullptr);
  EXPECT_EQ(Info->base, "tlp");
  EXPECT_EQ(
      online::makeOnlinePolicy(*Info, loadMix(Profiles).controller, {})->name(),
      "tlp-dynamic");
  EXPECT_FALSE(isSpatialPolicy("tlp-dynamic"));
  // The simulator's --policy runs it beside its base.
  const RunResult R = runPolicy(mix("mc_kmeans_stream"), "tlp-dynamic");
  EXPECT_TRUE(R.completed);
  EXPECT_EQ(R.shared_sm_steps, 0u);
}

} // namespace
