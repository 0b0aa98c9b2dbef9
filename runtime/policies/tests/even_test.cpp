#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

// 10 SMs over 3 kernels: 10 / 3 = 3 rem 1 -> 4, 3, 3 from SM 0, 4, 7.
// CTAs per SM for 256 threads x 32 regs, no smem: threads 2048/256 = 8,
// regs 65536/(256*32) = 8, blocks 32 -> 8. For 1024 threads x 64 regs:
// threads 2, regs 65536/65536 = 1 -> 1.
TEST(Even, SplitsWithRemainderFirst) {
  ProfileSet S = profiles(
      gpu(10),
      json::array({{{"name", "a"},
                    {"block", {{"threads", 256}, {"regs_per_thread", 32}}}},
                   {{"name", "b"},
                    {"block", {{"threads", 1024}, {"regs_per_thread", 64}}}},
                   {{"name", "c"}}}));
  Plan P = decide("even", S);
  ASSERT_EQ(P.kernels.size(), 3u);
  EXPECT_EQ(P.kernels[0].sms, 4);
  EXPECT_EQ(P.kernels[0].sm_first, 0);
  EXPECT_EQ(P.kernels[1].sms, 3);
  EXPECT_EQ(P.kernels[1].sm_first, 4);
  EXPECT_EQ(P.kernels[2].sms, 3);
  EXPECT_EQ(P.kernels[2].sm_first, 7);
  EXPECT_EQ(P.kernels[0].ctas_per_sm, 8);
  EXPECT_EQ(P.kernels[1].ctas_per_sm, 1);
  EXPECT_EQ(P.kernels[2].ctas_per_sm, 0); // no block shape: launch default
  EXPECT_EQ(P.gated_sms, 0);
  EXPECT_EQ(P.mode, "even");
}

// stream_triad example: perf(66) = 1/10, perf(132) = 1/9.7 -> NP = 0.97.
TEST(Even, PredictsNpFromTheCurve) {
  Plan P = decide("even", example("compute_memory_pair.json"));
  EXPECT_NEAR(*find(P, "stream_triad").predicted_np, 0.97, 1e-12);
  EXPECT_NEAR(*find(P, "sgemm").predicted_np, 0.5, 1e-12);
}
