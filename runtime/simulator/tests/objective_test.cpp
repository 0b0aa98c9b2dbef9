// Each policy is judged by its own objective (objective.hpp): STP,
// fairness, or HSM-QoS's target first and the others' STP then; the static
// search finds the best configuration by each from one pass over its grid.
#include "objective.hpp"
#include "static_search.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace smpart;
using namespace smpart::sim;

namespace {

Mix mix(const std::string &Name) {
  return loadMix(std::string(SMPART_MIXES) + "/" + Name + ".json");
}

/// A finished run with one NP per kernel of \p M's launches, in order.
RunResult runWith(const Mix &M, const std::vector<double> &Np) {
  RunResult R;
  for (std::size_t I = 0; I < Np.size(); ++I) {
    KernelResult K;
    K.name = M.launches[I].kernel;
    K.np = Np[I];
    R.kernels.push_back(K);
  }
  R.metrics = metricsOf(R.kernels);
  R.completed = true;
  return R;
}

TEST(SimObjective, EachPolicyIsJudgedByWhatItOptimises) {
  EXPECT_EQ(objectiveOf("hsm-fair"), Objective::Fairness);
  EXPECT_EQ(objectiveOf("hsm-fair-online"), Objective::Fairness);
  EXPECT_EQ(objectiveOf("hsm-qos-online"), Objective::Qos);
  EXPECT_EQ(objectiveOf("cd-search-online"), Objective::Stp);
  EXPECT_EQ(objectiveOf("tlp-dynamic"), Objective::Stp);
}

TEST(SimObjective, LevelMeansNeitherIsBetterByMoreThanTheMargin) {
  ObjectiveValue A, B;
  A.value = 1.000;
  B.value = 1.004;
  EXPECT_TRUE(better(B, A));
  EXPECT_TRUE(level(A, B, 0.005));
  EXPECT_TRUE(level(B, A, 0.005));
  B.value = 1.006;
  EXPECT_FALSE(level(A, B, 0.005));
  EXPECT_FALSE(level(B, A, 0.005));
  // QoS: meeting the target against missing it is never level, however
  // close the others' STP; both short, the ratios decide.
  A.goal = B.goal = Objective::Qos;
  B.value = 1.0;
  A.qos_ratio = 1.0;
  B.qos_ratio = 0.999;
  EXPECT_FALSE(level(A, B, 0.005));
  A.qos_ratio = 0.780;
  B.qos_ratio = 0.781;
  EXPECT_TRUE(level(A, B, 0.005));
  B.qos_ratio = 0.80;
  EXPECT_FALSE(level(A, B, 0.005));
}

TEST(SimObjective, QosMeetsTheHighPriorityTargetFirst) {
  // memory + compute: sgemm is high priority with np_target 0.8.
  const Mix M = mix("mc_sgemm_stream");
  ASSERT_EQ(M.launches[0].kernel, "sgemm");
  const ObjectiveValue Met =
      evaluate(M, runWith(M, {0.85, 0.5}), Objective::Qos);
  EXPECT_TRUE(Met.met());
  EXPECT_DOUBLE_EQ(Met.value, 0.5); // the others' STP only
  const ObjectiveValue Short =
      evaluate(M, runWith(M, {0.72, 0.9}), Objective::Qos);
  EXPECT_FALSE(Short.met());
  EXPECT_NEAR(Short.qos_ratio, 0.9, 1e-12);
  // More STP of the others does not make up for a missed target.
  EXPECT_TRUE(better(Met, Short));
  EXPECT_FALSE(better(Short, Met));
  EXPECT_FALSE(within(Short, Met, 0.05));
  EXPECT_TRUE(
      within(evaluate(M, runWith(M, {0.9, 0.48}), Objective::Qos), Met, 0.05));
  EXPECT_FALSE(
      within(evaluate(M, runWith(M, {0.9, 0.47}), Objective::Qos), Met, 0.05));
  // Fairness and STP are the run's metrics.
  EXPECT_NEAR(evaluate(M, runWith(M, {0.8, 0.4}), Objective::Fairness).value,
              0.5, 1e-12);
  EXPECT_NEAR(evaluate(M, runWith(M, {0.8, 0.4}), Objective::Stp).value, 1.2,
              1e-12);
}

TEST(SimObjective, OneSearchFindsTheBestStaticByEachObjective) {
  const Mix M = mix("mc_sgemm_stream");
  RunOptions O;
  O.noise = false;
  const std::vector<SearchResult> Best = searchBestStatics(
      M, O, {Objective::Stp, Objective::Fairness, Objective::Qos});
  ASSERT_EQ(Best.size(), 3u);
  EXPECT_EQ(Best[0].evaluated, staticGrid(M).size());
  // Each is the best of the grid by its own objective.
  EXPECT_DOUBLE_EQ(Best[0].result.metrics.stp,
                   searchBestStatic(M, O).result.metrics.stp);
  EXPECT_GE(Best[0].result.metrics.stp, Best[1].result.metrics.stp);
  EXPECT_GE(Best[1].result.metrics.fairness, Best[0].result.metrics.fairness);
  const ObjectiveValue Qos = evaluate(M, Best[2].result, Objective::Qos);
  EXPECT_TRUE(Qos.met());
  for (std::size_t G : {0u, 1u})
    EXPECT_FALSE(better(evaluate(M, Best[G].result, Objective::Qos), Qos));
}

TEST(SimObjective, TheSearchKeepsTheBestOfEachSpace) {
  // Compute + compute under re-launches: the best configuration shares
  // SMs; the best SM partition is another one, and the better of the two
  // spaces' bests is the overall best.
  const Mix M = mix("cc_sgemm_conv");
  RunOptions O;
  O.noise = false;
  O.relaunch = true;
  const SearchResult Best = searchBestStatic(M, O);
  ASSERT_TRUE(Best.spatial && Best.sharing);
  EXPECT_FALSE(Best.spatial->config.sharing);
  EXPECT_TRUE(Best.sharing->config.sharing);
  const double Spatial = Best.spatial->result.metrics.stp;
  const double Sharing = Best.sharing->result.metrics.stp;
  EXPECT_DOUBLE_EQ(Best.result.metrics.stp, std::max(Spatial, Sharing));
  EXPECT_EQ(Best.best.sharing, Sharing > Spatial);
  // Each is at least every configuration of its space.
  for (const StaticConfig &C : staticGrid(M)) {
    RunOptions RO = O;
    RO.spatial = !C.sharing;
    const RunResult R = runMix(M, StaticPolicy(C), RO);
    if (R.completed) {
      EXPECT_LE(R.metrics.stp, C.sharing ? Sharing : Spatial) << C.describe();
    }
  }
}

} // namespace
