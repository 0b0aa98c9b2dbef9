#include "test_support.hpp"

#include "smpart/policy/tlp_policy.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

TEST(Tlp, ClassifiesFromTheCtaCurve) {
  EXPECT_EQ(classifyTlp({{1, 30}, {2, 16}, {4, 10}}), TlpType::Up);
  EXPECT_EQ(classifyTlp({{1, 10}, {2, 12}, {4, 15}}), TlpType::Down);
  EXPECT_EQ(classifyTlp({{1, 30}, {4, 10}, {8, 11}}), TlpType::Optimal);
}

namespace {
json kernel(const char *Name, const char *Type, int Opt, int Threads, int Regs,
            int Smem = 0) {
  json K = {
      {"name", Name},
      {"block",
       {{"threads", Threads}, {"regs_per_thread", Regs}, {"smem_bytes", Smem}}},
      {"metrics", {{"type", Type}}}};
  if (Opt > 0)
    K["metrics"]["opt_ctas_per_sm"] = Opt;
  return K;
}
} // namespace

// Alg. 1 line 1-4, A Down (opt 2), B Up. Per SM 2048 threads, 65536 regs.
// A: 256 thr x 32 regs (8192 regs/CTA) -> Tb_A = 2: 512 thr, 16384 regs.
// B: 128 thr x 64 regs (8192 regs/CTA): Compute_Remain = min(
//   (2048-512)/128 = 12, (65536-16384)/8192 = 6, blocks 30) = 6 -> Tb_B = 6.
// Input order B, A: the algorithm is symmetric.
TEST(Tlp, DownWithUp) {
  ProfileSet S =
      profiles(gpu(8), json::array({kernel("b", "Up", 0, 128, 64),
                                    kernel("a", "Down", 2, 256, 32)}));
  Plan P = decide("tlp", S);
  EXPECT_EQ(P.mode, "static-tlp");
  EXPECT_EQ(find(P, "a").ctas_per_sm, 2);
  EXPECT_EQ(find(P, "b").ctas_per_sm, 6);
  EXPECT_EQ(find(P, "b").sms, 8);
  EXPECT_EQ(find(P, "a").klass, "Down");
}

// Lines 13-16, Optimal + Optimal: Tb_A = opt(A) = 3 (3*256 = 768 thr,
// 3*8192 = 24576 regs); Compute_Remain(B) for 256 thr x 32 regs:
// min(1280/256 = 5, 40960/8192 = 5) = 5; Tb_B = min(5, opt(B) = 4) = 4.
TEST(Tlp, OptimalWithOptimal) {
  ProfileSet S =
      profiles(gpu(8), json::array({kernel("a", "Optimal", 3, 256, 32),
                                    kernel("b", "Optimal", 4, 256, 32)}));
  Plan P = decide("tlp", S);
  EXPECT_EQ(find(P, "a").ctas_per_sm, 3);
  EXPECT_EQ(find(P, "b").ctas_per_sm, 4);
}

// Lines 6-9, Down + Optimal where opt(B) exceeds what remains:
// A Down opt 6 x (256 thr, 64 regs = 16384/CTA) would use all 65536 regs
// with opt 4 -> we keep room for one B CTA: A = min(6, fit with reserve).
// A alone fits min(8, 4) = 4; opt clamped to 4; reserve 1 B CTA (8192 regs)
// -> (65536 - 8192) / 16384 = 3 -> Tb_A = 3; B: min(remain 2, opt 5) = 2.
TEST(Tlp, DownWithOptimalKeepsRoomForB) {
  ProfileSet S =
      profiles(gpu(8), json::array({kernel("a", "Down", 6, 256, 64),
                                    kernel("b", "Optimal", 5, 256, 32)}));
  Plan P = decide("tlp", S);
  EXPECT_EQ(find(P, "a").ctas_per_sm, 3);
  EXPECT_EQ(find(P, "b").ctas_per_sm, 2);
}

// Both Up: default concurrency (LeftOver). a (512 thr) alone fits 4 but
// keeps one b CTA (512 thr): 3; b gets (2048 - 1536)/512 = 1.
TEST(Tlp, BothUpIsDefaultConcurrency) {
  ProfileSet S = profiles(gpu(8), json::array({kernel("a", "Up", 0, 512, 16),
                                               kernel("b", "Up", 0, 512, 16)}));
  Plan P = decide("tlp", S);
  EXPECT_EQ(P.mode, "default-concurrency");
  EXPECT_EQ(find(P, "a").ctas_per_sm, 3);
  EXPECT_EQ(find(P, "b").ctas_per_sm, 1);
}

// Example: stream is Optimal from its curve (best 6 of 1..8), sgemm Up.
// stream Tb = min(6, fit next to one sgemm CTA) = 6 (regs 49152 + 16384);
// sgemm: regs left 16384 -> 1.
TEST(Tlp, ExampleFromCurves) {
  Plan P = decide("tlp", example("compute_memory_pair.json"));
  EXPECT_EQ(find(P, "stream_triad").klass, "Optimal");
  EXPECT_EQ(find(P, "stream_triad").ctas_per_sm, 6);
  EXPECT_EQ(find(P, "sgemm").klass, "Up");
  EXPECT_EQ(find(P, "sgemm").ctas_per_sm, 1);
}

TEST(Tlp, NeedsATypeOrACurve) {
  ProfileSet S = profiles(
      gpu(8), json::array({{{"name", "a"}, {"block", {{"threads", 64}}}}}));
  EXPECT_EQ(errorOf([&] { decide("tlp", S); }),
            "test.json: kernels[0].metrics.type: missing; policy tlp needs "
            "metrics.type or "
            "a by_ctas_per_sm curve with at least two points");
}
