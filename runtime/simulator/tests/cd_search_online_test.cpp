// CD-search online on the simulator: the classification phase on the even
// share, convergence within 10 epochs, the hysteresis bound once
// converged, the controller's invariants under its steps, probes past the
// paper's threshold kept only where measured to pay, against the offline
// cd-search when profiles are 30 % wrong, and SMPART_POLICY.
// Figures: simulator README.
#include "bundled_mixes.hpp"
#include "cd_search_online_policy.hpp"
#include "corun.hpp"
#include "fake_kernel.hpp"
#include "online_policies.hpp"
#include "online_test_support.hpp"
#include "static_search.hpp"

#include "smpart/controller.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace smpart;
using namespace smpart::sim;
using Class = online::CdSearchOnlinePolicy::Class;

namespace {

const std::string Mixes = SMPART_MIXES;

using smpart::sim::testing::AllMixes;
using smpart::sim::testing::expectChangeBound;
using smpart::sim::testing::expectConvergedWithin;
using smpart::sim::testing::mix;

/// What the search showed after each epoch, beside what every watch keeps.
struct SearchState {
  std::string mode;
  std::map<unsigned long long, Class> classes;
};
using Watch =
    smpart::sim::testing::Watch<online::CdSearchOnlinePolicy, SearchState>;
using OnlineRun =
    smpart::sim::testing::OnlineRun<online::CdSearchOnlinePolicy, SearchState>;

OnlineRun runOnline(const Mix &M, bool Noise = true) {
  OnlineRun R;
  R.watch = std::make_shared<Watch>(
      std::make_shared<online::CdSearchOnlinePolicy>(
          M.controller, online::CdSearchOnlineOptions()),
      [](const online::CdSearchOnlinePolicy &P) {
        return SearchState{P.mode(), P.classes()};
      });
  RunOptions O;
  O.noise = Noise;
  O.spatial = true;
  O.online = R.watch;
  R.result = runMix(M, *policy::findPolicy("even"), O);
  return R;
}

/// Kernel name -> class from the first epoch that classified \p Ids.
std::map<std::string, Class> classesOf(const Watch &W, std::size_t Kernels) {
  for (const Watch::Entry &E : W.Log) {
    if (E.report.kernels.size() != Kernels || E.classes.empty())
      continue;
    std::map<std::string, Class> Out;
    for (const EpochSample &S : E.report.kernels)
      Out[S.name] = E.classes.at(S.id);
    return Out;
  }
  return {};
}

TEST(CdSearchOnline, ClassifiesOnTheEvenShareFromMeasurements) {
  {
    const OnlineRun R = runOnline(mix("mc_sgemm_stream"));
    const auto C = classesOf(*R.watch, 2);
    ASSERT_EQ(C.size(), 2u);
    EXPECT_EQ(C.at("sgemm"), Class::Compute);
    EXPECT_EQ(C.at("stream_triad"), Class::Memory);
    // Heterogeneous: performance mode, which takes SMs from stream_triad
    // for sgemm in its first step.
    bool Performance = false, Gave = false;
    for (const Watch::Entry &E : R.watch->Log)
      if (E.report.kernels.size() == 2) {
        Performance |= E.mode == "performance";
        Gave |= E.report.kernels[0].sms > E.report.kernels[1].sms;
      }
    EXPECT_TRUE(Performance);
    EXPECT_TRUE(Gave);
  }
  {
    const OnlineRun R = runOnline(mix("cc_sgemm_conv"));
    const auto C = classesOf(*R.watch, 2);
    ASSERT_EQ(C.size(), 2u);
    EXPECT_EQ(C.at("sgemm"), Class::Compute);
    EXPECT_EQ(C.at("conv"), Class::Compute);
    // Compute only: even partitioning, no SM moves.
    for (const Watch::Entry &E : R.watch->Log) {
      if (E.report.kernels.size() != 2)
        continue;
      for (const EpochSample &S : E.report.kernels)
        EXPECT_EQ(S.sms, 66u) << "epoch " << E.report.index;
    }
    std::string Mode;
    for (const Watch::Entry &E : R.watch->Log)
      if (E.report.kernels.size() == 2)
        Mode = E.mode;
    EXPECT_EQ(Mode, "even");
  }
  {
    // Four kernels on 33 SMs each: stream_triad and lbm still scale
    // there alone, but beside each other they get less DRAM bandwidth
    // than they would use: the measured NP classifies them.
    const OnlineRun R = runOnline(mix("four_sgemm_conv_stream_lbm"));
    const auto C = classesOf(*R.watch, 4);
    ASSERT_EQ(C.size(), 4u);
    EXPECT_EQ(C.at("sgemm"), Class::Compute);
    EXPECT_EQ(C.at("conv"), Class::Compute);
    EXPECT_EQ(C.at("stream_triad"), Class::Memory);
    EXPECT_EQ(C.at("lbm"), Class::Memory);
  }
}

TEST(CdSearchOnline, PowerModeGatesWhatTheMemoryKernelsDoNotNeed) {
  // Sec. 4.3: two memory kernels keep the fewest SMs measured within 5 %
  // of their even-share rate; the rest run nothing.
  const OnlineRun R = runOnline(mix("mm_stream_lbm"));
  const auto C = classesOf(*R.watch, 2);
  ASSERT_EQ(C.size(), 2u);
  EXPECT_EQ(C.at("stream_triad"), Class::Memory);
  EXPECT_EQ(C.at("lbm"), Class::Memory);
  std::map<std::string, double> Share;
  int Checked = 0;
  for (const Watch::Entry &E : R.watch->Log) {
    if (E.report.kernels.size() != 2)
      continue;
    if (!E.classes.empty()) {
      EXPECT_EQ(E.mode, "power");
    }
    unsigned Used = 0;
    for (const EpochSample &S : E.report.kernels) {
      Used += S.sms;
      if (S.sms == 66 && S.steady && !Share.count(S.name))
        Share[S.name] = S.rate;
    }
    if (!E.converged || *E.converged >= E.report.index)
      continue;
    EXPECT_LT(Used, 132u) << "epoch " << E.report.index;
    for (const EpochSample &S : E.report.kernels)
      if (S.steady) {
        EXPECT_GE(S.rate, 0.95 * Share.at(S.name)) << S.name;
        ++Checked;
      }
  }
  EXPECT_GT(Checked, 4);
}

TEST(CdSearchOnline, ComputeKernelMisclassifiedByItsProfileIsMeasuredBack) {
  // sgemm's profile 30 % too fast makes it look starved on its share (NP
  // 0.70), so the classification calls it memory-bound beside
  // stream_triad and power mode gates SMs. Its rate then falls with the
  // SMs power mode takes (0.71 of its share's rate on 47 of 66 SMs): it is
  // compute-bound after all, and the search goes on in performance mode,
  // SMs from stream_triad to sgemm, none gated.
  const OnlineRun R = runOnline(mix("mc_sgemm_stream", -0.3));
  EXPECT_NE(classesOf(*R.watch, 2).at("sgemm"), Class::Compute)
      << "the profile no longer misleads the classification: this test "
         "needs another error";
  const Watch::Entry *Last = nullptr; // the last epoch of both kernels
  for (const Watch::Entry &E : R.watch->Log)
    if (E.report.kernels.size() == 2)
      Last = &E;
  ASSERT_NE(Last, nullptr);
  EXPECT_EQ(Last->mode, "performance");
  const EpochSample &Sgemm = Last->report.kernels[0];
  const EpochSample &Stream = Last->report.kernels[1];
  ASSERT_EQ(Sgemm.name, "sgemm");
  EXPECT_EQ(Last->classes.at(Sgemm.id), Class::Compute);
  EXPECT_EQ(Sgemm.sms + Stream.sms, 132u) << "no SM gated";
  EXPECT_GT(Sgemm.sms, Stream.sms);
}

TEST(CdSearchOnline, HighLlcHitRateMemoryKernelIsCacheBound) {
  // LAVAMD's case (Sec. 4.1.1): spmv (LLC hit rate 0.5) starved on its
  // share is bound by the LLC; sgemm beside it is compute.
  const Mix M = mix("three_sgemm_stream_spmv");
  online::CdSearchOnlinePolicy P(M.controller, {});
  EpochReport R;
  R.index = 3;
  for (const char *Name : {"sgemm", "spmv"}) {
    EpochSample S;
    S.id = R.kernels.size() + 1;
    S.name = Name;
    S.sms = 66;
    S.ctas_per_sm = 4;
    S.steady = true;
    S.rate = 1;
    S.np = S.name == "spmv" ? 0.6 : 1.0;
    S.isolated_source = IsolatedSource::Profile;
    R.kernels.push_back(S);
  }
  policy::Plan Current;
  Current.num_sms = 132;
  const std::optional<policy::Plan> Next = P.onEpoch(R, Current);
  ASSERT_TRUE(Next);
  EXPECT_EQ(P.classes().at(1), Class::Compute);
  EXPECT_EQ(P.classes().at(2), Class::Cache);
  EXPECT_EQ(Next->mode, "performance");
  ASSERT_EQ(Next->kernels.size(), 2u);
  EXPECT_EQ(Next->kernels[1].klass, "cache");
  EXPECT_EQ(Next->kernels[1].sms, 66 - 12); // two of 24 SMs, scaled
  EXPECT_EQ(Next->kernels[0].sms, 66 + 12);
  // A step that loses more than 5 % ends the search where it was within.
  R.index = 5;
  R.kernels[0].sms = 78;
  R.kernels[1].sms = 54;
  R.kernels[1].rate = 0.9;
  const std::optional<policy::Plan> Back = P.onEpoch(R, *Next);
  ASSERT_TRUE(Back);
  EXPECT_EQ(Back->kernels[1].sms, 66);
  EXPECT_EQ(P.convergedAt(), 5u);
  // Converged: nothing moves until the kernel set changes.
  R.index = 7;
  R.kernels[1].sms = 66;
  R.kernels[1].rate = 0.5;
  EXPECT_FALSE(P.onEpoch(R, *Back));
}

/// A steady epoch report of kernels (id, name, SMs, rate, NP).
struct Sample {
  unsigned long long id;
  const char *name;
  unsigned sms;
  double rate, np;
};
EpochReport reportOf(unsigned long long Index, std::vector<Sample> Kernels) {
  EpochReport R;
  R.index = Index;
  for (const Sample &K : Kernels) {
    EpochSample S;
    S.id = K.id;
    S.name = K.name;
    S.sms = K.sms;
    S.ctas_per_sm = 4;
    S.steady = true;
    S.rate = K.rate;
    S.np = K.np;
    S.isolated_source = IsolatedSource::Profile;
    R.kernels.push_back(S);
  }
  return R;
}

TEST(CdSearchOnline, ProbesPastTheThresholdArePaidForByMeasurement) {
  // spmv (memory) gives sgemm 12 SMs per step. On its 42-SM probe it is
  // 9 % below its rate on the share, beyond the paper's 5 %; the step is
  // kept only when sgemm's measured gain in NP exceeds spmv's loss and
  // spmv is past its curve's knee (its rate fell less than its SMs).
  const Mix M = mix("three_sgemm_stream_spmv");
  struct Case {
    const char *what;
    double margin, sgemm_rate, spmv_rate;
    bool goes_on;
  };
  for (const Case &C : {
           // sgemm +0.09 NP (private 2 blocks/us), spmv -6 % of its rate
           // at 0.81 NP: paid.
           Case{"paid", 0.01, 1.36, 5.45, true},
           Case{"threshold alone", 0, 1.36, 5.45, false},
           // spmv loses in proportion to its SMs: never pays, however
           // much sgemm gains.
           Case{"scales with its SMs", 0.01, 1.8, 5.8 * 42 / 54, false},
           // sgemm gains less than spmv loses.
           Case{"does not pay", 0.01, 1.22, 5.3, false},
       }) {
    online::CdSearchOnlineOptions O;
    O.gain_margin = C.margin;
    online::CdSearchOnlinePolicy P(M.controller, O);
    policy::Plan Current;
    Current.num_sms = 132;
    ASSERT_TRUE(P.onEpoch(
        reportOf(3, {{1, "sgemm", 66, 1, 1}, {2, "spmv", 66, 6, 0.86}}),
        Current));
    ASSERT_EQ(P.mode(), "performance");
    ASSERT_TRUE(P.onEpoch(
        reportOf(5, {{1, "sgemm", 78, 1.18, 1}, {2, "spmv", 54, 5.8, 0.9}}),
        Current)); // within 5 %: probe 42
    const std::optional<policy::Plan> Next =
        P.onEpoch(reportOf(7, {{1, "sgemm", 90, C.sgemm_rate, 1},
                               {2, "spmv", 42, C.spmv_rate, 0.9}}),
                  Current);
    ASSERT_TRUE(Next) << C.what;
    EXPECT_EQ(P.convergedAt().has_value(), !C.goes_on) << C.what;
    EXPECT_EQ(Next->kernels[1].sms, C.goes_on ? 30 : 54) << C.what;
  }
}

TEST(CdSearchOnline, NewLaunchesOfSearchedKernelsKeepTheirPartition) {
  // A program that launches the same kernels again (a loop, or the
  // papers' re-launch of a kernel that finished first) runs the same
  // co-run: the search must not start over with every launch id.
  const Mix M = mix("three_sgemm_stream_spmv");
  online::CdSearchOnlineOptions O;
  O.gain_margin = 0; // the paper's threshold alone: stop at the 42-SM probe
  online::CdSearchOnlinePolicy P(M.controller, O);
  policy::Plan Current;
  Current.num_sms = 132;
  ASSERT_TRUE(P.onEpoch(
      reportOf(3, {{1, "sgemm", 66, 1, 1}, {2, "spmv", 66, 1, 0.6}}), Current));
  ASSERT_TRUE(P.onEpoch(
      reportOf(5, {{1, "sgemm", 78, 1.2, 1}, {2, "spmv", 54, 0.97, 0.6}}),
      Current)); // within 5 %: probe 42
  const std::optional<policy::Plan> Stop = P.onEpoch(
      reportOf(7, {{1, "sgemm", 90, 1.4, 1}, {2, "spmv", 42, 0.9, 0.6}}),
      Current);
  ASSERT_TRUE(Stop);
  ASSERT_EQ(P.convergedAt(), 7u);
  EXPECT_EQ(Stop->kernels[1].sms, 54);

  // spmv finished and was launched again (id 3): at its arrival the
  // offline plan is even; the policy puts the searched partition back,
  // in the offline plan's order.
  policy::Plan Even;
  Even.num_sms = 132;
  for (const char *Name : {"spmv", "sgemm"}) {
    policy::KernelDecision D;
    D.name = Name;
    D.sms = 66;
    Even.kernels.push_back(D);
  }
  policy::layOutContiguously(Even);
  const std::optional<policy::Plan> Back = P.onReplan("arrival", Even, {});
  ASSERT_TRUE(Back);
  ASSERT_EQ(Back->kernels.size(), 2u);
  EXPECT_EQ(Back->kernels[0].name, "spmv");
  EXPECT_EQ(Back->kernels[0].sms, 54);
  EXPECT_EQ(Back->kernels[1].sms, 78);
  EXPECT_EQ(Back->kernels[1].sm_first, 54); // laid out, no overlap
  EXPECT_EQ(Back->mode, "performance");
  EXPECT_FALSE(P.onReplan("departure", Even, {}));
  // Its first epoch: still converged, classes carried to the new id, and
  // no knob moves.
  EXPECT_FALSE(P.onEpoch(
      reportOf(9, {{1, "sgemm", 78, 1.2, 1}, {3, "spmv", 54, 0.97, 0.6}}),
      Current));
  EXPECT_EQ(P.classes().at(3), Class::Cache);
  EXPECT_EQ(P.mode(), "performance");

  // Another kernel set is classified from scratch...
  EXPECT_TRUE(P.onEpoch(
      reportOf(11, {{1, "sgemm", 66, 1, 1}, {4, "stream_triad", 66, 1, 0.7}}),
      Current));
  EXPECT_EQ(P.classes().at(4), Class::Memory);
  // ... and when sgemm and spmv run together again, even from an even
  // start, they are back on their partition without a classification.
  const std::optional<policy::Plan> Again = P.onEpoch(
      reportOf(13, {{5, "sgemm", 66, 1, 1}, {6, "spmv", 66, 1, 0.6}}), Current);
  ASSERT_TRUE(Again);
  EXPECT_EQ(Again->kernels[0].sms, 78);
  EXPECT_EQ(Again->kernels[1].sms, 54);
  EXPECT_EQ(P.convergedAt(), 13u);
}

TEST(CdSearchOnline, ConvergesWithinTenEpochsOfEveryKernelSet) {
  int Total = 0;
  for (const char *Name : AllMixes) {
    const OnlineRun R = runOnline(mix(Name));
    ASSERT_TRUE(R.result.completed) << Name;
    Total += expectConvergedWithin(R.watch->Log, 10, Name);
  }
  EXPECT_GE(Total, 5); // kernel sets of two to four kernels, 10+ epochs
}

TEST(CdSearchOnline, AtMostTwoChangesPerKernelPerTenEpochsOnceConverged) {
  int Converged = 0;
  for (const char *Name : AllMixes)
    Converged += expectChangeBound(runOnline(mix(Name)).watch->Log,
                                   smpart::sim::testing::smsMoved, 10, 2, Name);
  EXPECT_GT(Converged, 20); // the bound was checked on converged epochs
}

TEST(CdSearchOnline, InvariantsHoldUnderItsSteps) {
  for (const char *Name : AllMixes)
    for (double Error : {0.0, 0.3}) {
      const OnlineRun R = runOnline(mix(Name, Error));
      EXPECT_TRUE(R.result.completed) << Name;
      EXPECT_EQ(R.result.shared_sm_steps, 0u) << Name;
      EXPECT_EQ(R.result.exactly_once_violations, 0u) << Name;
    }
  EXPECT_GT(runOnline(mix("mc_sgemm_stream")).watch->Inner->steps(), 1u);
}

TEST(CdSearchOnline, BeatsOfflineCdSearchWithProfilesThirtyPercentWrong) {
  // Where the measured search finds more than the profile's curve does
  // (simulator README, "Online CD-search"): the memory kernels lose less
  // beside their co-runners than alone, and each step is measured. Judged
  // as the papers measure a mix: every first run has its co-runners
  // throughout (--relaunch).
  for (const char *Name :
       {"mc_sgemm_stream", "arrival_sgemm_stream", "mc_kmeans_stream",
        "three_sgemm_stream_spmv", "four_sgemm_conv_stream_lbm"}) {
    const Mix M = mix(Name, 0.3);
    RunOptions O;
    O.spatial = true;
    O.relaunch = true;
    const RunResult Offline = runPolicy(M, "cd-search", O);
    const RunResult Online = runPolicy(M, "cd-search-online", O);
    EXPECT_GT(Online.metrics.stp, Offline.metrics.stp) << Name;
  }
}

TEST(CdSearchOnline, MeasuredStepsPastTheThresholdReachTheBestPartition) {
  // The paper's 5 % stops memory + compute at the even split (stream_triad
  // loses 5.3 % on 54 SMs); the measured exchange (its loss against
  // sgemm's gain) goes on while the SMs buy more than they cost, to within
  // 5 % of the best static configuration of the model, where the
  // threshold alone stays 7 % below it.
  const Mix M = mix("mc_sgemm_stream");
  RunOptions O;
  O.spatial = true;
  O.relaunch = true;
  const SearchResult Best = searchBestStatic(M, O);
  const double Measured = runPolicy(M, "cd-search-online", O).metrics.stp;
  EXPECT_GE(Measured, 0.95 * Best.result.metrics.stp) << Best.best.describe();
  online::CdSearchOnlineOptions Paper;
  Paper.gain_margin = 0;
  O.online =
      std::make_shared<online::CdSearchOnlinePolicy>(M.controller, Paper);
  const double Threshold = runPolicy(M, "even", O).metrics.stp;
  EXPECT_LT(Threshold, 0.95 * Best.result.metrics.stp);
  EXPECT_GT(Measured, Threshold);
}

TEST(CdSearchOnline, SelectableByNameInTheEnvironment) {
  smpart::testing::Env E;
  E.Vars["SMPART_POLICY"] = "cd-search-online";
  E.Vars["SMPART_PROFILES"] = Mixes + "/mc_sgemm_stream.json";
  std::vector<unsigned> Sms;
  for (unsigned I = 0; I < 132; ++I)
    Sms.push_back(I);
  controller::EnvConfig C = controller::configureFromEnvironment(E.fn(), Sms);
  ASSERT_TRUE(C.error.empty()) << C.error;
  ASSERT_TRUE(C.controller);
  // Arrivals are planned by `even`: the classification phase's shares.
  EXPECT_EQ(C.controller->policy().name(), "even");
  Controller &Ctl = *C.controller;
  auto Sgemm = std::make_shared<smpart::testing::FakeKernel>(
      1, "sgemm", 1u << 30, 4, Sms, nullptr);
  auto Stream = std::make_shared<smpart::testing::FakeKernel>(
      2, "stream_triad", 1u << 30, 6, Sms, nullptr);
  Ctl.epoch(0);
  Ctl.onArrival(Sgemm);
  Ctl.onArrival(Stream);
  for (int Epoch = 1; Epoch <= 3; ++Epoch) {
    Sgemm->advance(4);
    Stream->advance(4);
    Ctl.epoch(1000.0 * Epoch);
  }
  // The classification epoch found stream_triad's curve saturated on 66
  // SMs and took the first step of performance mode: 12 SMs to sgemm.
  std::map<std::string, std::size_t> Got;
  for (const KernelAllocation &A : Ctl.allocations())
    Got[A.name] = A.mask.count() + A.waiting.count();
  EXPECT_EQ(Got["sgemm"], 78u);
  EXPECT_EQ(Got["stream_triad"], 54u);
  EXPECT_NE(online::findOnlinePolicy("cd-search-online"), nullptr);
}

} // namespace
