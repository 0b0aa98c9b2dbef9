#include "test_support.hpp"

#include "smpart/policy/greedy_policy.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

TEST(Greedy, PrunesToMonotonicallyDecreasingTimes) {
  // Sorted by CTAs: 1:30, 2:16, 3:18, 4:12, 5:12 -> keep 1, 2, 4
  // (3 is slower than 2, 5 is not faster than 4).
  auto Kept = pruneConfigurations(
      {{4, 12.0}, {1, 30.0}, {3, 18.0}, {2, 16.0}, {5, 12.0}});
  ASSERT_EQ(Kept.size(), 3u);
  EXPECT_EQ(Kept[0].ctas, 1);
  EXPECT_EQ(Kept[1].ctas, 2);
  EXPECT_EQ(Kept[2].ctas, 4);
}

TEST(Greedy, RemainingTimeEq1) {
  // T_m = T_i * (TB_t - TB_e) / TB_t = 40 * (100 - 25) / 100 = 30.
  EXPECT_DOUBLE_EQ(remainingTime(40.0, 100, 25), 30.0);
}

// compute_memory_pair example (per SM: 2048 threads, 65536 regs, 233472 B
// smem, 32 blocks). sgemm CTA: 256 thr, 16384 regs, 32768 B; configs
// 1:30 2:16 3:11 4:10. stream CTA: 256 thr, 8192 regs, 0 B; configs
// 1:40 2:22 4:12 6:10.5 (8:10.8 pruned). Nothing executed yet.
// Start 1+1: regs 24576. Order by remaining: stream 40, sgemm 30.
//  stream -> 2 (22):  regs 32768 fits. Order: sgemm 30, stream 22.
//  sgemm  -> 2 (16):  regs 49152 fits. Order: stream 22, sgemm 16.
//  stream -> 4 (12):  regs 65536 fits. Order: sgemm 16, stream 12.
//  sgemm  -> 3:       regs 81920 > 65536, roll back, marked = 1.
//  stream -> 6:       regs 81920 > 65536, roll back, marked = 2. Done.
// Result: sgemm 2, stream 4 CTAs/SM, every SM.
TEST(Greedy, HandComputedExample) {
  Plan P = decide("greedy", example("compute_memory_pair.json"), true);
  EXPECT_EQ(find(P, "sgemm").ctas_per_sm, 2);
  EXPECT_EQ(find(P, "stream_triad").ctas_per_sm, 4);
  for (const KernelDecision &K : P.kernels) {
    EXPECT_EQ(K.sms, 132);
    EXPECT_EQ(K.sm_first, 0);
  }
  EXPECT_EQ(P.mode, "shared-sm");
  EXPECT_FALSE(P.notes.empty());
}

// Executed blocks change who grows first. Two identical kernels
// (512 thr, 1:20 2:12 3:9 ms); threads allow 4 CTAs in total.
// a has executed 50 of 100 blocks: R_a(1) = 20 * 0.5 = 10, R_b(1) = 20.
//  b -> 2 (12); b 12 > a 10 -> b -> 3 (9): threads 4*512 = 2048 fits.
//  a 10 > b 9 -> a -> 2: 2560 threads > 2048, roll back, mark a.
//  b -> no more configurations; mark. Result a 1, b 3.
TEST(Greedy, ExecutedBlocksShortenRemainingTime) {
  json Curve = json::array({{{"ctas", 1}, {"time_ms", 20.0}},
                            {{"ctas", 2}, {"time_ms", 12.0}},
                            {{"ctas", 3}, {"time_ms", 9.0}}});
  json Block = {{"threads", 512}};
  ProfileSet S = profiles(
      gpu(4), json::array({{{"name", "a"},
                            {"block", Block},
                            {"total_blocks", 100},
                            {"executed_blocks", 50},
                            {"isolated", {{"by_ctas_per_sm", Curve}}}},
                           {{"name", "b"},
                            {"block", Block},
                            {"total_blocks", 100},
                            {"isolated", {{"by_ctas_per_sm", Curve}}}}}));
  Plan P = decide("greedy", S);
  EXPECT_EQ(find(P, "a").ctas_per_sm, 1);
  EXPECT_EQ(find(P, "b").ctas_per_sm, 3);
}

// Smallest configurations do not fit together (2 x 1536 threads > 2048):
// the paper launches every kernel with one CTA.
TEST(Greedy, FallsBackToOneCtaEach) {
  json Curve = json::array({{{"ctas", 1}, {"time_ms", 20.0}}});
  // 40960 registers a block: one fits an SM, two do not.
  json Block = {{"threads", 1024}, {"regs_per_thread", 40}};
  ProfileSet S = profiles(
      gpu(4), json::array({{{"name", "a"},
                            {"block", Block},
                            {"total_blocks", 10},
                            {"isolated", {{"by_ctas_per_sm", Curve}}}},
                           {{"name", "b"},
                            {"block", Block},
                            {"total_blocks", 10},
                            {"isolated", {{"by_ctas_per_sm", Curve}}}}}));
  Plan P = decide("greedy", S);
  EXPECT_EQ(P.mode, "fallback-one-cta");
  EXPECT_EQ(P.kernels[0].ctas_per_sm, 1);
  EXPECT_EQ(P.kernels[1].ctas_per_sm, 1);
}
