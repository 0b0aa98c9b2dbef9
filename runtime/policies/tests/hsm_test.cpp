#include "test_support.hpp"

#include "smpart/policy/hsm_model.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

// compute_memory_pair example, epoch E = 5e5 cycles, S = 66 SMs each,
// I_max = 4 * 66 * 5e5 = 1.32e8, f/E = 1.98e9 / 5e5 = 3960.
//  sgemm:  B^d = (1.32e8/1e8) * 2e5 * 128 * 3960 = 133.81632 GB/s
//          B^p = 4800 * (0.4*0.5 + 0.35) = 2640 GB/s -> compute-bound,
//          NP = 66/132 = 0.5 (Eq. 4), g = 0.5/66.
//  stream: B^d = (1.32e8/2e7) * 3e6 * 128 * 3960 = 10036.2 GB/s
//          B^p = 4800 * (0.4*0.6 + 0.35) = 2832 GB/s -> memory-bound,
//          NP = 0.5 / 0.59 = 0.847458 (Eq. 5), g = 0.847458/66.
TEST(Hsm, ClassifierAndPredictors) {
  EXPECT_NEAR(hsmDemandGbs(4.0, 66, 5e5, 1e8, 2e5, 128, 1.98), 133.81632, 1e-6);
  EXPECT_NEAR(hsmPotentialGbs(4800, 0.4, 0.35, 0.5), 2640.0, 1e-9);
  ProfileSet S = example("compute_memory_pair.json");
  auto States = hsmAnalyse(S, "test");
  EXPECT_FALSE(States[0].memory_bound);
  EXPECT_TRUE(States[1].memory_bound);
  EXPECT_NEAR(States[1].demand_gbs, 10036.224, 1e-6);
  EXPECT_NEAR(States[0].np, 0.5, 1e-12);
  EXPECT_NEAR(States[1].np, 0.5 / 0.59, 1e-12);
  EXPECT_NEAR(States[1].gradient, 0.5 / 0.59 / 66, 1e-15);
}

// Fairness 0.5 / 0.847458 = 0.59 < 0.9. Move
// x = (NP_max - NP_min) / (g_max + g_min) = 0.347458 / (0.012840 + 0.007576)
//   = 17.02 -> 17 SMs from stream to sgemm: sgemm 83 SMs NP 0.628788,
//   stream 49 SMs NP 0.629158; fairness 0.99941 >= 0.9, stop.
TEST(Hsm, FairHandExample) {
  Plan P = decide("hsm-fair", example("compute_memory_pair.json"), true);
  EXPECT_EQ(find(P, "sgemm").sms, 83);
  EXPECT_EQ(find(P, "stream_triad").sms, 49);
  EXPECT_EQ(find(P, "stream_triad").sm_first, 83);
  EXPECT_NEAR(*find(P, "sgemm").predicted_np, 83.0 / 132, 1e-12);
  EXPECT_NEAR(*find(P, "stream_triad").predicted_np, 0.5 / 0.59 / 66 * 49,
              1e-12);
  EXPECT_EQ(find(P, "stream_triad").klass, "memory");
}

TEST(Hsm, FairKeepsAllocationAboveThreshold) {
  ProfileSet S = example("compute_memory_pair.json");
  PolicyOptions O;
  O.fair_threshold = 0.5; // current fairness 0.59 already above it
  Plan P = findPolicy("hsm-fair")->decide(S, O);
  EXPECT_EQ(P.kernels[0].sms, 66);
  EXPECT_EQ(P.kernels[1].sms, 66);
}

// sgemm is high priority with np_target 0.8: ceil(0.8 / (0.5/66)) =
// ceil(105.6) = 106 SMs (NP 0.80303); stream gets 132 - 106 = 26 SMs,
// NP 26 * 0.012840 = 0.333837.
TEST(Hsm, QosHandExample) {
  Plan P = decide("hsm-qos", example("compute_memory_pair.json"), true);
  EXPECT_EQ(find(P, "sgemm").sms, 106);
  EXPECT_EQ(find(P, "stream_triad").sms, 26);
  EXPECT_NEAR(*find(P, "sgemm").predicted_np, 106.0 / 132, 1e-12);
}

// Three kernels: high h (compute, g = 1/10 on 10 SMs), low a (memory, NP
// capped: g = 0.9/2 = 0.45) and low b (compute, g = 0.1). h needs
// ceil(0.5 / 0.1) = 5 SMs. Remaining 5: a and b start at 1 each (NP 0.45,
// 0.1); 3 left. Gains: a: min(1, 0.9) - 0.45 = 0.45, b: 0.1 -> a (2 SMs,
// NP 0.9); a: 1.0 - 0.9 = 0.1 vs b 0.1: tie, first wins -> a (3, NP 1.0);
// a: 0 vs b 0.1 -> b (2). Result h 5, a 3, b 2.
TEST(Hsm, QosSpreadMaximisesSumOfNp) {
  auto Shared = [](int Sms, double Insts, double Acc, double Bw) {
    return json{{"sms", Sms},          {"instructions", Insts}, {"cycles", 5e5},
                {"mem_accesses", Acc}, {"bw_util", Bw},         {"rbh", 0.5}};
  };
  // Compute: Acc tiny. Memory a: B^d huge; NP = 0.495/0.55 = 0.9 on 2 SMs.
  ProfileSet S = profiles(
      gpu(10),
      json::array({{{"name", "h"},
                    {"priority", "high"},
                    {"np_target", 0.5},
                    {"shared", Shared(1, 2e6, 1.0, 0.01)}},
                   {{"name", "a"}, {"shared", Shared(2, 1e5, 1e7, 0.495)}},
                   {{"name", "b"}, {"shared", Shared(1, 2e6, 1.0, 0.01)}}}));
  Plan P = decide("hsm-qos", S);
  EXPECT_EQ(find(P, "h").sms, 5);
  EXPECT_EQ(find(P, "a").sms, 3);
  EXPECT_EQ(find(P, "b").sms, 2);
  EXPECT_EQ(find(P, "a").klass, "memory");
}

TEST(Hsm, QosNeedsAHighPriorityKernel) {
  json Shared = {{"sms", 1},
                 {"instructions", 1e6},
                 {"mem_accesses", 1.0},
                 {"bw_util", 0.1},
                 {"rbh", 0.5}};
  ProfileSet S =
      profiles(gpu(4), json::array({{{"name", "a"}, {"shared", Shared}}}));
  EXPECT_EQ(errorOf([&] { decide("hsm-qos", S); }),
            "test.json: kernels[*].priority: missing; policy hsm-qos needs one "
            "kernel "
            "with \"priority\": \"high\"");
  ProfileSet T =
      profiles(gpu(4), json::array({{{"name", "a"}, {"priority", "high"}}}));
  EXPECT_NE(
      errorOf([&] { decide("hsm-qos", T); }).find("kernels[0].shared: missing"),
      std::string::npos);
}

// Exact line bw = 0.4 rbh + 0.35 at rbh 0.2, 0.5, 0.8 -> c1 0.4, c2 0.35.
TEST(Hsm, LeastSquaresFit) {
  HsmFit F = fitHsmConstants({0.2, 0.5, 0.8}, {0.43, 0.55, 0.67});
  EXPECT_NEAR(F.c1, 0.4, 1e-12);
  EXPECT_NEAR(F.c2, 0.35, 1e-12);
  EXPECT_NEAR(F.r2, 1.0, 1e-12);
  // Example training file: x = .2 .4 .6 .8 .9, y = .43 .52 .60 .68 .72:
  // Sx 2.9, Sy 2.95, Sxx 2.01, Sxy 1.846;
  // c1 = (5*1.846 - 2.9*2.95) / (5*2.01 - 2.9^2) = 0.675 / 1.64 = 0.411585,
  // c2 = (2.95 - c1 * 2.9) / 5 = 0.351280.
  HsmFit G = fitHsmConstants(example("hsm_training.json"));
  EXPECT_EQ(G.samples, 5u);
  EXPECT_NEAR(G.c1, 0.675 / 1.64, 1e-12);
  EXPECT_NEAR(G.c2, (2.95 - 0.675 / 1.64 * 2.9) / 5, 1e-12);
}
