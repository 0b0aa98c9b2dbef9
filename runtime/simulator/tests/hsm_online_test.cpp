// HSM-Fair / HSM-QoS online on the simulator: convergence within 10
// epochs, near the fairest static configuration, better than the offline
// policy when profiles are wrong, the hysteresis bound once converged, and
// the controller's invariants under its steps. Figures: simulator README.
#include "bundled_mixes.hpp"
#include "corun.hpp"
#include "hsm_online_policy.hpp"
#include "online_policies.hpp"
#include "online_test_support.hpp"
#include "static_search.hpp"

#include "smpart/controller.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

using namespace smpart;
using namespace smpart::sim;

namespace {

const std::string Mixes = SMPART_MIXES;

/// Mixes whose kernels start together (convergence is measured from the
/// first epoch of each kernel set).
const char *const FairMixes[] = {"mc_sgemm_stream", "mm_stream_lbm",
                                 "cc_sgemm_conv", "mc_kmeans_stream",
                                 "three_sgemm_stream_spmv"};

using smpart::sim::testing::AllMixes;
using smpart::sim::testing::expectChangeBound;
using smpart::sim::testing::expectConvergedWithin;
using smpart::sim::testing::mix;
using Watch = smpart::sim::testing::Watch<online::HsmOnlinePolicy>;
using OnlineRun = smpart::sim::testing::OnlineRun<online::HsmOnlinePolicy>;

/// \p Probe: calibration epochs; by default the registry's (fair only).
OnlineRun runOnline(const Mix &M, bool Qos, bool Noise = true,
                    std::optional<bool> Probe = std::nullopt,
                    bool Project = true) {
  online::HsmOnlineOptions HO;
  HO.qos = Qos;
  HO.probe = Probe.value_or(!Qos);
  HO.project = Project;
  OnlineRun R;
  R.watch = std::make_shared<Watch>(
      std::make_shared<online::HsmOnlinePolicy>(M.controller, HO));
  RunOptions O;
  O.noise = Noise;
  O.spatial = true;
  O.online = R.watch;
  R.result = runMix(M, *policy::findPolicy(Qos ? "hsm-qos" : "hsm-fair"), O);
  return R;
}

TEST(HsmOnline, ConvergesWithinTenEpochsOfEveryKernelSet) {
  int Total = 0;
  for (const char *Name : FairMixes)
    for (bool Qos : {false, true}) {
      const OnlineRun R = runOnline(mix(Name), Qos);
      ASSERT_TRUE(R.result.completed) << Name;
      // Each run of epochs with the same two or more kernels that lasts
      // over 10 epochs converged within its first 10.
      Total += expectConvergedWithin(
          R.watch->Log, 10, Name + std::string(Qos ? " qos" : " fair"));
    }
  EXPECT_GE(Total, 8);
}

TEST(HsmOnline, FairerThanOfflineAndNearTheFairestStaticOnMixedPairs) {
  for (const char *Name : FairMixes) {
    const Mix M = mix(Name);
    RunOptions O;
    O.spatial = true;
    const RunResult Offline = runMix(M, *policy::findPolicy("hsm-fair"), O);
    const OnlineRun R = runOnline(M, false);
    EXPECT_GE(R.result.metrics.fairness, Offline.metrics.fairness - 0.01)
        << Name;
    if (std::string(Name).rfind("mc_", 0) == 0) { // memory + compute
      EXPECT_GT(R.result.metrics.fairness, Offline.metrics.fairness + 0.1)
          << Name;
    }
  }
}

TEST(HsmOnline, ProjectedFinalNpReachesTheFairestStatic) {
  // Fairness is of the final NP, turnaround included: equalising the
  // projected final NP (time so far plus blocks left over the predicted
  // rate) reaches the fairest static configuration of the model within
  // 5 % on every bundled mix, under the name the table runs (registry
  // options: calibration epochs). On memory + memory the model's DRAM
  // split is max-min fair, so SMs do not buy bandwidth share as HSM's
  // linear model predicts: its first step gains under half of its
  // prediction, and the step planned from that measurement gets there.
  const char *const Mixes[] = {"mc_sgemm_stream",
                               "mm_stream_lbm",
                               "cc_sgemm_conv",
                               "mc_kmeans_stream",
                               "three_sgemm_stream_spmv",
                               "four_sgemm_conv_stream_lbm",
                               "arrival_sgemm_stream",
                               "arrival3_lbm_sgemm_histo",
                               "demo"};
  for (const char *Name : Mixes) {
    const Mix M = mix(Name);
    const SearchResult Best = searchBestStatic(M, {}, Objective::Fairness);
    RunOptions O;
    O.spatial = true;
    const RunResult R = runPolicy(M, "hsm-fair-online", O);
    EXPECT_GE(R.metrics.fairness, 0.95 * Best.result.metrics.fairness)
        << Name << ": fairest static " << Best.best.describe();
  }
  // The epoch's NP instead: equal while the kernels co-run, but the
  // kernel that finishes last ran its tail alone (compute + compute), and
  // the tail is what decides.
  const Mix M = mix("cc_sgemm_conv");
  const SearchResult Best = searchBestStatic(M, {}, Objective::Fairness);
  EXPECT_GE(runOnline(M, false).result.metrics.fairness,
            0.95 * Best.result.metrics.fairness);
  EXPECT_LT(runOnline(M, false, true, false, false).result.metrics.fairness,
            0.95 * Best.result.metrics.fairness);
}

TEST(HsmOnline, ProjectsTheKernelsThatArriveMidRun) {
  // sgemm from 0 ms, stream_triad from 4 ms: the second kernel set's
  // steps equalise projected final NP, from the arrival it estimated.
  const OnlineRun R = runOnline(mix("arrival_sgemm_stream"), false);
  int Steps = 0;
  for (const Watch::Entry &E : R.watch->Log)
    if (E.plan && E.report.start_us >= 4000)
      for (const std::string &N : E.plan->notes)
        Steps += N.find("projected final fairness") != std::string::npos;
  EXPECT_GT(Steps, 0);
}

TEST(HsmOnline, FairerThanOfflineWithProfilesThirtyPercentWrong) {
  // The calibration epochs measure each memory-bound kernel's time alone,
  // which the projection of final NP needs and a wrong profile gets wrong.
  for (const char *Name :
       {"mc_sgemm_stream", "mc_kmeans_stream", "three_sgemm_stream_spmv",
        "cc_sgemm_conv", "arrival_sgemm_stream", "arrival3_lbm_sgemm_histo"}) {
    const Mix M = mix(Name, 0.3);
    RunOptions O;
    O.spatial = true;
    const RunResult Offline = runPolicy(M, "hsm-fair", O);
    const RunResult Online = runPolicy(M, "hsm-fair-online", O);
    EXPECT_GT(Online.metrics.fairness, Offline.metrics.fairness) << Name;
  }
}

TEST(HsmOnline, CalibratesIsolatedRatesWhereMeasurementsAllow) {
  // Profiles 30 % wrong: stream_triad's isolated times 30 % too long,
  // lbm's 30 % too short (misprofile()).
  const Mix M = mix("mm_stream_lbm", 0.3);
  // A rate above the profile's isolated rate proves it too slow (kmeans's
  // times 30 % too long; it runs uncontended beside stream_triad).
  const OnlineRun Plain = runOnline(mix("mc_kmeans_stream", 0.3), false);
  const auto &K = Plain.watch->Inner->calibration();
  ASSERT_TRUE(K.count("kmeans"));
  EXPECT_NEAR(K.at("kmeans"), 1.3, 0.06);
  // The calibration epoch measures both directions.
  const OnlineRun Probed = runOnline(M, false, true, true);
  const auto &P = Probed.watch->Inner->calibration();
  ASSERT_TRUE(P.count("stream_triad") && P.count("lbm"));
  EXPECT_NEAR(P.at("stream_triad"), 1.3, 0.05);
  EXPECT_NEAR(P.at("lbm"), 0.7, 0.05);
  EXPECT_EQ(Probed.result.shared_sm_steps, 0u);
  EXPECT_EQ(Probed.result.exactly_once_violations, 0u);
}

/// Forwards to HSM online, and once its first step is in place reports the
/// kernel that step gave SMs to at a third of its measured rate: a step
/// that, measured, made fairness worse.
class SpoiltStep final
    : public smpart::sim::testing::Forwarding<online::HsmOnlinePolicy> {
public:
  using Forwarding::Forwarding;
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &C) override {
    EpochReport Seen = R;
    if (Step && !Undo)
      for (EpochSample &S : Seen.kernels)
        if (S.name == Gainer && static_cast<int>(S.sms) == To)
          S.rate /= 3;
    std::optional<policy::Plan> P = Inner->onEpoch(Seen, C);
    if (P && P->mode == "fair") {
      if (!Step) {
        Step = P;
        // The kernel that gains the most SMs.
        for (const policy::KernelDecision &D : P->kernels)
          for (const EpochSample &S : R.kernels)
            if (S.name == D.name && D.sms - static_cast<int>(S.sms) > Gain) {
              Gain = D.sms - static_cast<int>(S.sms);
              Gainer = D.name;
              To = D.sms;
              Before[S.name] = static_cast<int>(S.sms);
            } else if (S.name == D.name) {
              Before[S.name] = static_cast<int>(S.sms);
            }
      } else if (!Undo) {
        Undo = P;
      }
    }
    return P;
  }

  std::optional<policy::Plan> Step, Undo;
  std::string Gainer;
  int Gain = 0, To = 0;
  std::map<std::string, int> Before;
};

TEST(HsmOnline, FairUndoesAStepMeasuredWorse) {
  // Memory + memory: the first step gives stream_triad SMs (README).
  const Mix M = mix("mm_stream_lbm");
  online::HsmOnlineOptions HO;
  HO.probe = false;
  auto P = std::make_shared<SpoiltStep>(
      std::make_shared<online::HsmOnlinePolicy>(M.controller, HO));
  RunOptions O;
  O.spatial = true;
  O.noise = false;
  O.online = P;
  const RunResult R = runMix(M, *policy::findPolicy("hsm-fair"), O);
  ASSERT_TRUE(R.completed);
  ASSERT_TRUE(P->Step) << "no step to spoil";
  ASSERT_TRUE(P->Undo) << "the step measured worse stayed";
  EXPECT_NE(P->Undo->notes.front().find("undone"), std::string::npos)
      << P->Undo->notes.front();
  for (const policy::KernelDecision &D : P->Undo->kernels)
    EXPECT_EQ(D.sms, P->Before.at(D.name)) << D.name;
}

TEST(HsmOnline, AtMostTwoChangesPerKernelPerTenEpochsOnceConverged) {
  int Converged = 0;
  for (const char *Name : AllMixes)
    for (bool Qos : {false, true}) {
      const OnlineRun R = runOnline(mix(Name), Qos);
      Converged +=
          expectChangeBound(R.watch->Log, smpart::sim::testing::smsMoved, 10, 2,
                            Name + std::string(Qos ? " qos" : " fair"));
    }
  EXPECT_GT(Converged, 80); // the bound was checked on converged epochs
}

TEST(HsmOnline, InvariantsHoldUnderItsSteps) {
  for (const char *Name : AllMixes)
    for (bool Qos : {false, true}) {
      const OnlineRun R = runOnline(mix(Name), Qos);
      EXPECT_TRUE(R.result.completed) << Name;
      EXPECT_EQ(R.result.shared_sm_steps, 0u) << Name;
      EXPECT_EQ(R.result.exactly_once_violations, 0u) << Name;
    }
  // And it does repartition: some mix took online steps.
  EXPECT_GT(runOnline(mix("mc_sgemm_stream"), false).watch->Inner->steps(), 0u);
}

TEST(HsmOnline, QosKeepsTheHighPriorityKernelNearItsTarget) {
  // mc_sgemm_stream: sgemm is high priority with np_target 0.8.
  const OnlineRun R = runOnline(mix("mc_sgemm_stream"), true, false);
  int Checked = 0;
  for (const Watch::Entry &E : R.watch->Log) {
    if (!E.converged || E.report.kernels.size() != 2)
      continue;
    for (const EpochSample &S : E.report.kernels)
      if (S.name == "sgemm" && S.steady) {
        EXPECT_GE(R.watch->Inner->predictNp(S, 132), 0.8 * 0.97)
            << "epoch " << E.report.index;
        ++Checked;
      }
  }
  EXPECT_GT(Checked, 3);
}

TEST(HsmOnline, QosMeetsTheTargetByMeasuredStepsWhereTheModelFails) {
  // mm_stream_lbm: stream_triad (high priority, np_target 0.8) beside lbm.
  // The model's first step gives stream_triad SMs, but the DRAM split
  // follows lbm's demand, so its NP does not move; only measured steps
  // that take lbm's SMs reach the target, over the whole run (the epochs
  // spent below it made up for).
  const Mix M = mix("mm_stream_lbm");
  const OnlineRun R = runOnline(M, true);
  ASSERT_TRUE(R.result.completed);
  int Measured = 0;
  for (const Watch::Entry &E : R.watch->Log)
    if (E.plan)
      for (const std::string &N : E.plan->notes)
        Measured += N.find("beyond the model") != std::string::npos;
  EXPECT_GT(Measured, 0);
  bool Found = false;
  for (const KernelResult &K : R.result.kernels)
    if (K.name == "stream_triad") {
      Found = true;
      EXPECT_GE(K.np, 0.8);
    }
  EXPECT_TRUE(Found);
}

TEST(HsmOnline, QosAimsAtTheTargetOverTheWholeRun) {
  // arrival_sgemm_stream: sgemm (high priority, np_target 0.8) runs alone
  // for 4 ms before stream_triad arrives. Ahead of its target, it needs
  // less than 0.8 from then on: the rest goes to stream_triad, which gets
  // more than under the offline hsm-qos, and sgemm still meets 0.8.
  const Mix M = mix("arrival_sgemm_stream");
  const OnlineRun R = runOnline(M, true);
  const RunResult Offline = runPolicy(M, "hsm-qos");
  ASSERT_TRUE(R.result.completed);
  ASSERT_TRUE(Offline.completed);
  auto Np = [](const RunResult &X, const char *Name) {
    for (const KernelResult &K : X.kernels)
      if (K.name == Name)
        return K.np;
    return 0.0;
  };
  EXPECT_GE(Np(R.result, "sgemm"), 0.8);
  EXPECT_GT(Np(R.result, "stream_triad"), 1.03 * Np(Offline, "stream_triad"));
  int Lower = 0; // steps that aimed below the target for the rest of the run
  for (const Watch::Entry &E : R.watch->Log)
    if (E.plan)
      for (const std::string &N : E.plan->notes)
        Lower += N.find("for the rest of its run") != std::string::npos;
  EXPECT_GT(Lower, 0);
}

TEST(HsmOnline, QosPlansTheOthersByTheirProjectedFinalNp) {
  // While the high-priority kernel runs, the others' SMs go where their
  // projected final NP is largest: its SMs come back to them when it ends,
  // which the epoch's NP does not see. Four kernels (sgemm high priority),
  // under the name the table runs: within 5 % of the best static
  // configuration for QoS (0.914 of it by the epoch's NP).
  const Mix M = mix("four_sgemm_conv_stream_lbm");
  const ObjectiveValue Best = evaluate(
      M, searchBestStatic(M, {}, Objective::Qos).result, Objective::Qos);
  RunOptions O;
  O.spatial = true;
  const ObjectiveValue Online =
      evaluate(M, runPolicy(M, "hsm-qos-online", O), Objective::Qos);
  EXPECT_TRUE(within(Online, Best, 0.05))
      << Online.describe() << " against " << Best.describe();
}

TEST(HsmOnline, QosDatesALaunchThatWaitedForItsSmsFromItsFirstBlocks) {
  // mc_kmeans_stream under --relaunch: kmeans (high priority) is launched
  // again 20 us before an epoch ends and finishes no block in it, its SMs
  // still on their way from stream_triad. Taken for a kernel preempted
  // half the epoch, it would seem 0.5 ms behind its target and take SMs
  // stream_triad needs (0.937 of the best static for QoS); dated by its
  // first blocks' lifetime, it keeps the partition (within 5 %).
  const Mix M = mix("mc_kmeans_stream");
  RunOptions O;
  O.spatial = true;
  O.relaunch = true;
  const ObjectiveValue Best = evaluate(
      M, searchBestStatic(M, O, Objective::Qos).result, Objective::Qos);
  const ObjectiveValue Online =
      evaluate(M, runPolicy(M, "hsm-qos-online", O), Objective::Qos);
  EXPECT_TRUE(within(Online, Best, 0.05))
      << Online.describe() << " against " << Best.describe();
}

TEST(HsmOnline, QosGivesEverySmForStpOnceNoHighPriorityKernelRuns) {
  // 3 kernels: sgemm (high priority) finishes first; HSM-QoS's remaining
  // resources, now every SM, go for the largest sum of NP, not fairness.
  const OnlineRun R = runOnline(mix("three_sgemm_stream_spmv"), true);
  int Stp = 0, Fair = 0;
  for (const Watch::Entry &E : R.watch->Log)
    if (E.plan)
      for (const std::string &N : E.plan->notes) {
        Stp += N.find("no high-priority kernel") != std::string::npos;
        Fair += N.find("fairness") != std::string::npos;
      }
  EXPECT_GT(Stp, 0);
  EXPECT_EQ(Fair, 0);
}

TEST(HsmOnline, SelectableByNameInTheEnvironment) {
  const std::string Profiles = Mixes + "/mc_sgemm_stream.json";
  std::vector<unsigned> Sms;
  for (unsigned I = 0; I < 132; ++I)
    Sms.push_back(I);
  auto Env = [&](const char *Policy) {
    return [=](const char *Name) -> const char * {
      if (std::string(Name) == "SMPART_POLICY")
        return Policy;
      if (std::string(Name) == "SMPART_PROFILES")
        return Profiles.c_str();
      return nullptr;
    };
  };
  controller::EnvConfig C =
      controller::configureFromEnvironment(Env("hsm-fair-online"), Sms);
  ASSERT_TRUE(C.error.empty()) << C.error;
  ASSERT_TRUE(C.controller);
  EXPECT_EQ(C.controller->policy().name(), "hsm-fair");
  C = controller::configureFromEnvironment(Env("hsm-fast"), Sms);
  EXPECT_NE(C.error.find("hsm-qos-online"), std::string::npos) << C.error;
  EXPECT_NE(online::findOnlinePolicy("hsm-qos-online"), nullptr);
}

} // namespace
