#include "test_support.hpp"

#include "smpart/policy/evaluator.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

// CD-search plan on compute_memory_pair: sgemm 84 SMs, stream 48 SMs,
// default CTAs (4 and 8) so the CTA factor is 1.
//  sgemm alone T(132) = 10; perf(84) = 1/20 + (1/13.4 - 1/20) * 18/33
//   = 0.0634328 -> T = 15.7647, NP = 0.634328.
//  stream alone T(132) = 9.7; T(48) = 10.5 -> NP = 0.923810.
//  STP = 1.558138, ANTT = (1/0.634328 + 1/0.923810)/2 = 1.329468,
//  fairness = 0.634328 / 0.923810 = 0.686643.
TEST(Evaluator, HandExampleSpatial) {
  ProfileSet S = example("compute_memory_pair.json");
  Evaluation E = evaluatePlan(decide("cd-search", S), S, "plan.json");
  ASSERT_EQ(E.kernels.size(), 2u);
  double NpC =
      (0.05 + (1 / 13.4 - 0.05) * 18.0 / 33.0) * 10.0; // perf(84) * T(132)
  EXPECT_NEAR(E.kernels[0].np, NpC, 1e-12);
  EXPECT_NEAR(E.kernels[1].np, 9.7 / 10.5, 1e-12);
  EXPECT_NEAR(E.stp, NpC + 9.7 / 10.5, 1e-12);
  EXPECT_NEAR(E.antt, (1 / NpC + 10.5 / 9.7) / 2, 1e-12);
  EXPECT_NEAR(E.fairness, NpC / (9.7 / 10.5), 1e-12);
}

// Greedy plan: all SMs, sgemm 2 CTAs (T(2)/T(4) = 16/10 -> NP 0.625),
// stream 4 CTAs (T(4)/T(8) = 12/10.8 -> NP 0.9).
TEST(Evaluator, HandExampleSharedSms) {
  ProfileSet S = example("compute_memory_pair.json");
  Evaluation E = evaluatePlan(decide("greedy", S), S, "plan.json");
  EXPECT_NEAR(E.kernels[0].np, 0.625, 1e-12);
  EXPECT_NEAR(E.kernels[1].np, 0.9, 1e-12);
}

TEST(Evaluator, RejectsPlansThatDoNotMatch) {
  ProfileSet S = example("compute_memory_pair.json");
  Plan P = decide("even", S);
  P.kernels[1].name = "ghost";
  EXPECT_NE(errorOf([&] {
              evaluatePlan(P, S, "plan.json");
            }).find("plan.json: kernels[1].name: expected a kernel named in"),
            std::string::npos);
  P = decide("even", S);
  P.kernels[1].sms = 100;
  EXPECT_EQ(
      errorOf([&] { evaluatePlan(P, S, "plan.json"); }),
      "plan.json: kernels[1].sms: expected sm_first + sms <= 132, got 166");
}

// The JSON carries six significant digits: the model is not more precise,
// and 1.5250000000000001 is noise to the reader.
TEST(Evaluator, JsonHasSixSignificantDigits) {
  Evaluation E;
  E.kernels.push_back({"a", 10.0, 15.76470588235294, 0.6343283582089553});
  E.stp = 1.5250000000000001;
  E.antt = 1.0 / 3.0;
  E.fairness = 1;
  nlohmann::ordered_json J = evaluationToJson(E);
  EXPECT_EQ(J["kernels"][0]["predicted_ms"].dump(), "15.7647");
  EXPECT_EQ(J["kernels"][0]["np"].dump(), "0.634328");
  EXPECT_EQ(J["stp"].dump(), "1.525");
  EXPECT_EQ(J["antt"].dump(), "0.333333");
}
