// The simulator's model behaves (scaling, bandwidth, L1 and bypass), the
// exhaustive static search bounds the policies on the model, and the
// controller's invariants hold under simulated co-runs.
#include "bundled_mixes.hpp"
#include "corun.hpp"
#include "model.hpp"
#include "static_search.hpp"

#include "smpart/policy/input_error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace smpart;
using namespace smpart::sim;

namespace {

const std::string Mixes = SMPART_MIXES;

using smpart::sim::testing::AllMixes;

Mix mix(const std::string &Name) {
  return loadMix(Mixes + "/" + Name + ".json");
}

/// Traits of every kernel of a mix, by name.
struct Kernels {
  Mix M;
  std::vector<KernelTraits> T;
  explicit Kernels(const std::string &Name) : M(mix(Name)) {
    for (std::size_t I = 0; I < M.truth.kernels.size(); ++I)
      T.push_back(traitsOf(M.truth, I));
  }
  const KernelTraits &operator[](const std::string &Name) const {
    for (const KernelTraits &K : T)
      if (K.profile->name == Name)
        return K;
    ADD_FAILURE() << Name;
    return T.front();
  }
};

Placement place(const KernelTraits &T, unsigned First, unsigned Count,
                unsigned Ctas = 0, unsigned Bypass = 0) {
  Placement P;
  P.traits = &T;
  P.mask = smRange(First, Count);
  P.ctas = Ctas ? Ctas : T.occupancy;
  P.bypass = Bypass;
  return P;
}

double rateOf(const ContentionModel &M, std::vector<Placement> Ps,
              std::size_t I, Slowdown *F = nullptr) {
  std::vector<double> R;
  std::vector<Slowdown> Fs;
  M.rates(Ps, R, &Fs);
  if (F)
    *F = Fs[I];
  return R[I];
}

TEST(SimModel, AloneItFollowsTheProfileCurves) {
  Kernels K("mc_sgemm_stream");
  ContentionModel M(K.M.truth.gpu);
  for (const char *Name : {"sgemm", "stream_triad"})
    for (unsigned Sms : {8u, 33u, 66u, 132u})
      for (unsigned Ctas : {1u, 2u, 4u}) {
        const KernelTraits &T = K[Name];
        EXPECT_NEAR(rateOf(M, {place(T, 0, Sms, Ctas)}, 0),
                    T.isolatedRate(Sms, Ctas), 1e-12)
            << Name << " " << Sms << " " << Ctas;
      }
  // Alone on the whole GPU at its occupancy: by_sms's last point.
  EXPECT_NEAR(K["sgemm"].aloneUs(),
              K["sgemm"].profile->by_sms.back().time_ms * 1000, 1e-6);
}

TEST(SimModel, MoreSmsAreFasterUntilBandwidthSaturates) {
  Kernels K("mc_sgemm_stream");
  ContentionModel M(K.M.truth.gpu);
  for (const char *Name : {"sgemm", "stream_triad"}) {
    double Last = 0;
    for (unsigned Sms : {8u, 16u, 33u, 66u, 99u, 132u}) {
      const double R = rateOf(M, {place(K[Name], 0, Sms)}, 0);
      EXPECT_GT(R, Last) << Name << " " << Sms;
      Last = R;
    }
  }
  auto Gain = [&](const char *Name, unsigned From, unsigned To) {
    return rateOf(M, {place(K[Name], 0, To)}, 0) /
           rateOf(M, {place(K[Name], 0, From)}, 0);
  };
  EXPECT_GT(Gain("sgemm", 66, 132), 1.9);         // compute: keeps scaling
  EXPECT_LT(Gain("stream_triad", 66, 132), 1.02); // memory: saturated
  EXPECT_GT(Gain("stream_triad", 8, 33), 3.0);    // ... but not below
}

TEST(SimModel, TwoMemoryBoundKernelsSlowEachOther) {
  Kernels K("mm_stream_lbm");
  ContentionModel M(K.M.truth.gpu);
  const Placement S = place(K["stream_triad"], 0, 66);
  const Placement L = place(K["lbm"], 66, 66);
  Slowdown F;
  const double Together = rateOf(M, {S, L}, 0, &F);
  EXPECT_LT(Together, 0.9 * rateOf(M, {S}, 0));
  EXPECT_LT(F.dram, 0.9);
  EXPECT_EQ(F.issue, 1); // disjoint SMs: nothing else is shared
  EXPECT_EQ(F.l1, 1);
  EXPECT_LT(rateOf(M, {S, L}, 1), 0.9 * rateOf(M, {L}, 0));
  // A compute-bound neighbour barely touches DRAM.
  Kernels C("mc_sgemm_stream");
  ContentionModel MC(C.M.truth.gpu);
  const Placement G = place(C["sgemm"], 0, 66);
  const Placement T = place(C["stream_triad"], 66, 66);
  EXPECT_GT(rateOf(MC, {G, T}, 1), 0.99 * rateOf(MC, {T}, 0));
  EXPECT_GT(rateOf(MC, {G, T}, 0), 0.99 * rateOf(MC, {G}, 0));
}

TEST(SimModel, KernelsSharingSmsShareIssueSlots) {
  Kernels K("cc_sgemm_conv");
  ContentionModel M(K.M.truth.gpu);
  Slowdown F;
  const double Shared = rateOf(
      M, {place(K["sgemm"], 0, 132, 2), place(K["conv"], 0, 132, 4)}, 0, &F);
  EXPECT_LT(F.issue, 0.9);
  EXPECT_LT(Shared, 0.9 * rateOf(M, {place(K["sgemm"], 0, 132, 2)}, 0));
}

TEST(SimModel, BypassRelievesL1ContentionOfKernelsSharingSms) {
  Kernels K("mc_kmeans_stream");
  ContentionModel M(K.M.truth.gpu);
  const KernelTraits &Km = K["kmeans"], &St = K["stream_triad"];
  Slowdown None, Bypassed;
  const double Cached =
      rateOf(M, {place(Km, 0, 132, 4), place(St, 0, 132, 4, 0)}, 0, &None);
  const double Relieved =
      rateOf(M, {place(Km, 0, 132, 4), place(St, 0, 132, 4, 4)}, 0, &Bypassed);
  EXPECT_LT(None.l1, 0.95);    // the streaming kernel pollutes its L1
  EXPECT_EQ(Bypassed.l1, 1.0); // not once every streaming CTA bypasses
  EXPECT_GT(Relieved, 1.05 * Cached);
  // On disjoint SMs there is no L1 to share.
  Slowdown Apart;
  rateOf(M, {place(Km, 0, 66, 4), place(St, 66, 66, 4)}, 0, &Apart);
  EXPECT_EQ(Apart.l1, 1.0);
  // Bypass costs the bypassing kernel its own hits.
  Slowdown Own;
  rateOf(M, {place(Km, 0, 132, 4, 2)}, 0, &Own);
  EXPECT_LT(Own.l1, 1.0);
}

TEST(SimMixes, EveryMixLoadsAndNamesErrorsByPath) {
  for (const char *Name : AllMixes) {
    Mix M = mix(Name);
    EXPECT_FALSE(M.launches.empty()) << Name;
    // Profiles and mix keys are all known: nothing to warn about.
    EXPECT_TRUE(M.truth.warnings.empty())
        << Name << ": " << M.truth.warnings[0];
  }
  EXPECT_EQ(mix("demo").controller.kernels.size(), 2u);
  namespace fs = std::filesystem;
  const std::string Bad = (fs::temp_directory_path() /
                           ("smpart-mix-" + std::to_string(getpid()) + ".json"))
                              .string();
  std::ifstream In(Mixes + "/mc_sgemm_stream.json");
  nlohmann::json Doc = nlohmann::json::parse(In);
  Doc["mix"]["launches"][1]["kernel"] = "nope";
  std::ofstream(Bad) << Doc.dump();
  try {
    loadMix(Bad);
    ADD_FAILURE() << "no error";
  } catch (const policy::InputError &E) {
    EXPECT_NE(std::string(E.what()).find("mix.launches[1].kernel"),
              std::string::npos)
        << E.what();
  }
  std::remove(Bad.c_str());
}

TEST(SimMixes, MisprofilingMisleadsTheControllerNotTheModel) {
  Mix M = mix("mc_sgemm_stream");
  const double Sgemm = M.controller.kernels[0].by_sms.back().time_ms;
  const double Stream = *M.controller.kernels[1].metrics.bw_util;
  misprofile(M, 0.3);
  EXPECT_DOUBLE_EQ(M.controller.kernels[0].by_sms.back().time_ms, Sgemm * 1.3);
  EXPECT_DOUBLE_EQ(*M.controller.kernels[1].metrics.bw_util,
                   std::min(1.0, Stream * 1.3));
  EXPECT_DOUBLE_EQ(M.truth.kernels[0].by_sms.back().time_ms, Sgemm);
  // The model's NP is against the truth, so only the decisions change.
  RunOptions O;
  O.noise = false;
  const RunResult Right =
      runMix(mix("mc_sgemm_stream"), *policy::findPolicy("hsm-fair"), O);
  const RunResult Wrong = runMix(M, *policy::findPolicy("hsm-fair"), O);
  EXPECT_TRUE(Wrong.completed);
  EXPECT_EQ(Wrong.kernels[0].alone_us, Right.kernels[0].alone_us);
  EXPECT_NE(Wrong.metrics.stp, Right.metrics.stp);
}

TEST(SimMixes, LaunchesMayRepeatWithTheirOwnGrid) {
  namespace fs = std::filesystem;
  const std::string Path =
      (fs::temp_directory_path() /
       ("smpart-stream-" + std::to_string(getpid()) + ".json"))
          .string();
  std::ifstream In(Mixes + "/mc_sgemm_stream.json");
  nlohmann::json Doc = nlohmann::json::parse(In);
  // A long sgemm beside a periodic stream of short stream_triad launches.
  Doc["mix"]["launches"] = {{{"kernel", "sgemm"}, {"at_ms", 0}},
                            {{"kernel", "stream_triad"},
                             {"at_ms", 1},
                             {"blocks", 5000},
                             {"count", 4},
                             {"period_ms", 3}}};
  std::ofstream(Path) << Doc.dump();
  Mix M = loadMix(Path);
  ASSERT_EQ(M.launches.size(), 5u);
  EXPECT_DOUBLE_EQ(M.launches[4].at_us, 10000);
  EXPECT_EQ(M.launches[4].blocks, 5000);
  RunOptions O;
  O.spatial = true;
  const RunResult R = runMix(M, *policy::findPolicy("even"), O);
  EXPECT_TRUE(R.completed);
  EXPECT_EQ(R.exactly_once_violations, 0u);
  EXPECT_EQ(R.shared_sm_steps, 0u);
  ASSERT_EQ(R.kernels.size(), 5u);
  // 5000 of the profile's 100000 blocks: a twentieth of its time alone.
  EXPECT_NEAR(R.kernels[1].alone_us, 9711.0 / 20, 1);
  Doc["mix"]["launches"][1].erase("period_ms");
  std::ofstream(Path) << Doc.dump();
  try {
    loadMix(Path);
    ADD_FAILURE() << "no error";
  } catch (const policy::InputError &E) {
    EXPECT_NE(std::string(E.what()).find("mix.launches[1].period_ms"),
              std::string::npos)
        << E.what();
  }
  std::remove(Path.c_str());
}

TEST(SimCoRun, NoiseIsSeeded) {
  Mix M = mix("mc_sgemm_stream");
  const policy::Policy &P = *policy::findPolicy("cd-search");
  const RunResult A = runMix(M, P), B = runMix(M, P);
  EXPECT_EQ(A.metrics.stp, B.metrics.stp);
  M.sim.seed = 2;
  EXPECT_NE(runMix(M, P).metrics.stp, A.metrics.stp);
  RunOptions Quiet;
  Quiet.noise = false;
  EXPECT_NE(runMix(M, P, Quiet).metrics.stp, A.metrics.stp);
}

// Offline and online, run once and under the papers' re-launches: a plan
// that serialises kernels (priority, power-aware's rounds) must not turn
// re-launches into a run that never ends.
TEST(SimCoRun, ControllerInvariantsHoldUnderEveryPolicyAndMix) {
  unsigned long long Deferred = 0;
  for (const char *Name : AllMixes) {
    const Mix M = mix(Name);
    for (const std::string &Policy : policyNames())
      for (bool Relaunch : {false, true}) {
        RunOptions O;
        O.spatial = isSpatialPolicy(Policy);
        O.relaunch = Relaunch;
        const RunResult R = runPolicy(M, Policy, O);
        const std::string What = std::string(Name) + " under " + Policy +
                                 (Relaunch ? " with re-launches" : "");
        EXPECT_TRUE(R.completed) << What;
        EXPECT_EQ(R.shared_sm_steps, 0u) << What;
        EXPECT_EQ(R.exactly_once_violations, 0u) << What;
        EXPECT_EQ(R.kernels.size(), M.launches.size()) << What;
        for (const KernelResult &K : R.kernels) {
          EXPECT_GT(K.np, 0) << What << " " << K.name;
          EXPECT_LE(K.np, 1.05) << What << " " << K.name;
        }
        EXPECT_GT(R.epochs, 0u) << What;
        Deferred += R.deferred_grants;
      }
  }
  // SMs moved between running kernels waited for acknowledgements.
  EXPECT_GT(Deferred, 0u);
}

/// Each epoch, a random spatial plan over the kernels it reports: SM
/// counts, CTAs per SM and bypass drawn from a seeded generator.
class RandomSteps : public OnlinePolicy {
public:
  explicit RandomSteps(unsigned Seed) : Rng(Seed) {}
  std::string_view name() const override { return "random-steps"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &) override {
    policy::Plan P;
    const int N = static_cast<int>(R.kernels.size());
    if (N == 0 || N > 132)
      return std::nullopt;
    std::vector<int> Cuts = {0, 132};
    for (int I = 1; I < N; ++I)
      Cuts.push_back(std::uniform_int_distribution<int>(1, 131)(Rng));
    std::sort(Cuts.begin(), Cuts.end());
    for (int I = 0; I < N; ++I) {
      policy::KernelDecision D;
      D.name = R.kernels[static_cast<std::size_t>(I)].name;
      D.sm_first = Cuts[static_cast<std::size_t>(I)];
      D.sms = Cuts[static_cast<std::size_t>(I) + 1] - D.sm_first;
      D.ctas_per_sm = std::uniform_int_distribution<int>(1, 8)(Rng);
      D.bypass_ctas_per_sm =
          std::uniform_int_distribution<int>(0, D.ctas_per_sm)(Rng);
      P.kernels.push_back(D);
    }
    ++Steps;
    return P;
  }
  std::mt19937 Rng;
  int Steps = 0;
};

TEST(SimCoRun, InvariantsHoldUnderOnlineStepsEveryEpoch) {
  for (const char *Name : AllMixes) {
    Mix M = mix(Name);
    auto Online = std::make_shared<RandomSteps>(7);
    RunOptions O;
    O.spatial = true;
    O.online = Online;
    O.epoch_us = 200; // many steps, some before the last acknowledged
    const RunResult R = runMix(M, *policy::findPolicy("even"), O);
    EXPECT_TRUE(R.completed) << Name;
    EXPECT_GT(Online->Steps, 10) << Name;
    EXPECT_EQ(R.shared_sm_steps, 0u) << Name;
    EXPECT_EQ(R.exactly_once_violations, 0u) << Name;
  }
}

/// Records every epoch.
class Recorder : public OnlinePolicy {
public:
  std::string_view name() const override { return "recorder"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &) override {
    Reports.push_back(R);
    return std::nullopt;
  }
  std::vector<EpochReport> Reports;
};

TEST(SimCoRun, EpochNormalisedProgressIsTheModelsSlowdown) {
  Kernels K("mm_stream_lbm");
  auto Rec = std::make_shared<Recorder>();
  RunOptions O;
  O.noise = false;
  O.online = Rec;
  runMix(K.M, *policy::findPolicy("even"), O);
  // Even: 66 SMs each, disjoint: NP is the DRAM factor of each.
  ContentionModel Model(K.M.truth.gpu);
  std::vector<double> Rates;
  std::vector<Slowdown> F;
  Model.rates({place(K["stream_triad"], 0, 66), place(K["lbm"], 66, 66)}, Rates,
              &F);
  int Checked = 0;
  for (const EpochReport &R : Rec->Reports) {
    if (R.kernels.size() != 2 || !R.kernels[0].steady || !R.kernels[1].steady)
      continue;
    for (std::size_t I = 0; I < 2; ++I) {
      EXPECT_EQ(R.kernels[I].sms, 66u);
      EXPECT_EQ(R.kernels[I].isolated_source, IsolatedSource::Profile);
      EXPECT_NEAR(R.kernels[I].np, F[I].dram, 0.01)
          << R.kernels[I].name << " epoch " << R.index;
      EXPECT_NEAR(R.kernels[I].rate, Rates[I], 0.01 * Rates[I]);
    }
    ++Checked;
  }
  EXPECT_GT(Checked, 5);
  EXPECT_LT(F[0].dram, 0.9);
}

TEST(SimCoRun, ExhaustiveBestStaticIsAtLeastEveryPolicyInStp) {
  for (const char *Name : AllMixes) {
    Mix M = mix(Name);
    RunOptions O;
    O.noise = false;
    const SearchResult Best = searchBestStatic(M, O);
    EXPECT_GT(Best.evaluated, 30u) << Name;
    for (const policy::Policy *P : policy::allPolicies()) {
      const RunResult R = runMix(M, *P, O);
      EXPECT_GE(Best.result.metrics.stp, R.metrics.stp - 1e-9)
          << Name << " under " << P->name() << ": best "
          << Best.best.describe();
    }
  }
}

/// STP of compute + compute under a static split of the SMs, sgemm's
/// share \p Sgemm of 4.
double computeSplitStp(double Sgemm, bool Relaunch) {
  StaticConfig C;
  C.shares["sgemm"] = {Sgemm, 0, 0};
  C.shares["conv"] = {4 - Sgemm, 0, 0};
  RunOptions O;
  O.noise = false;
  O.spatial = true;
  O.relaunch = Relaunch;
  const RunResult R = runMix(mix("cc_sgemm_conv"), StaticPolicy(C), O);
  EXPECT_TRUE(R.completed);
  EXPECT_EQ(R.exactly_once_violations, 0u);
  EXPECT_EQ(R.shared_sm_steps, 0u);
  EXPECT_EQ(R.kernels.size(), 2u); // first runs only
  return R.metrics.stp;
}

// CD-search Sec. 3.3 (Fig. 5a): moving SMs between two compute-bound
// kernels is performance-neutral, under the paper's methodology (a kernel
// that finishes first is re-launched). Run once each, the kernel given
// more SMs finishes early and leaves them all to the other: uneven splits
// then win by shortening the tail, which no co-run in the papers has.
TEST(SimCoRun, RelaunchMakesComputeSplitsPerformanceNeutral) {
  const double Even = computeSplitStp(2, true);
  for (double Sgemm : {1.0, 3.0, 3.6})
    EXPECT_NEAR(computeSplitStp(Sgemm, true), Even, 0.03 * Even) << Sgemm;
  EXPECT_GT(computeSplitStp(3.6, false), 1.2 * computeSplitStp(2, false));
}

// Every first run is measured from its own arrival to its end, re-launches
// keep its co-runners busy and are not reported, and the run ends with the
// last first run.
TEST(SimCoRun, RelaunchReportsFirstRunsOnly) {
  for (const char *Name : AllMixes) {
    const Mix M = mix(Name);
    RunOptions O;
    O.relaunch = true;
    O.spatial = true;
    const RunResult R = runMix(M, *policy::findPolicy("even"), O);
    SCOPED_TRACE(Name);
    EXPECT_TRUE(R.completed);
    EXPECT_EQ(R.exactly_once_violations, 0u);
    EXPECT_EQ(R.shared_sm_steps, 0u);
    ASSERT_EQ(R.kernels.size(), M.launches.size());
    // Two one-shot launches never finish in the same step here: the first
    // to finish is launched again.
    const auto OneShot =
        std::count_if(M.launches.begin(), M.launches.end(),
                      [](const Launch &L) { return !L.periodic; });
    EXPECT_EQ(R.relaunches > 0, OneShot > 1);
    double Last = 0;
    for (std::size_t I = 0; I < R.kernels.size(); ++I) {
      EXPECT_EQ(R.kernels[I].name, M.launches[I].kernel);
      EXPECT_GT(R.kernels[I].np, 0);
      Last = std::max(Last, R.kernels[I].finish_us);
    }
    EXPECT_NEAR(R.end_us, Last, M.sim.dt_us);
  }
}

TEST(SimStatic, SharesFollowWeightsAndALoneKernelGetsTheGpu) {
  StaticConfig C;
  C.shares["a"] = {1, 2, 0};
  C.shares["b"] = {3, 4, 1};
  StaticPolicy P(C);
  policy::ProfileSet Set;
  Set.gpu.num_sms = 132;
  Set.kernels.resize(2);
  Set.kernels[0].name = "a";
  Set.kernels[1].name = "b#7";
  policy::Plan Plan = P.decide(Set, {});
  ASSERT_EQ(Plan.kernels.size(), 2u);
  EXPECT_EQ(Plan.kernels[0].sms, 33);
  EXPECT_EQ(Plan.kernels[1].sms, 99);
  EXPECT_EQ(Plan.kernels[1].sm_first, 33);
  EXPECT_EQ(Plan.kernels[1].ctas_per_sm, 4);
  EXPECT_EQ(Plan.kernels[1].bypass_ctas_per_sm, 1);
  Set.kernels.resize(1);
  Plan = P.decide(Set, {});
  EXPECT_EQ(Plan.kernels[0].sms, 132);
  EXPECT_EQ(Plan.kernels[0].ctas_per_sm, 0);
}

} // namespace
