#include "test_support.hpp"

#include "smpart/policy/power_aware_policy.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

TEST(PowerAware, PartitionBothFit) {
  // 20 + 30 <= 60: each gets its opt, 10 SMs gated later.
  EXPECT_EQ(powerPartition(20, 0.5, 30, 0.4, 60), std::make_pair(20, 30));
}

TEST(PowerAware, PartitionCapsAllSmsAndShrinksTheLessEfficient) {
  // opt1 = 60 = all -> 55. powEf2 > powEf1 -> case 2, App1 shrinks by 5:
  // 55+30 = 85 > 60 -> 50 -> 45 -> 40 -> 35 -> 30: 30 + 30 = 60 fits.
  EXPECT_EQ(powerPartition(60, 0.3, 30, 0.5, 60), std::make_pair(30, 30));
  // Tie: "if powEf1 > powEf2" is false -> case 2, App1 shrinks:
  // 40 + 40 -> 35, 30, 25, 20: 20 + 40 = 60.
  EXPECT_EQ(powerPartition(40, 0.5, 40, 0.5, 60), std::make_pair(20, 40));
  // Never below one SM: App2 (less efficient) 3 -> 1, then App1 gives one.
  EXPECT_EQ(powerPartition(9, 0.9, 3, 0.1, 10), std::make_pair(9, 1));
  EXPECT_EQ(powerPartition(10, 0.9, 3, 0.1, 10), std::make_pair(5, 3));
}

// compute_memory_pair: sgemm IPC/W 0.44, 0.528, 0.5657, 0.5867 -> opt 132;
// stream 0.1, 0.15, 0.1857, 0.1714, ... -> opt 33. 132 + 33 > 132:
// sgemm capped at 127; sgemm more efficient -> stream shrinks by 5:
// 33 -> 28 -> 23 -> 18 -> 13 -> 8 -> 3: 127 + 3 = 130 <= 132. Gate 2.
TEST(PowerAware, HandExample) {
  Plan P = decide("power-aware", example("compute_memory_pair.json"));
  EXPECT_EQ(find(P, "sgemm").sms, 127);
  EXPECT_EQ(find(P, "sgemm").sm_first, 0);
  EXPECT_EQ(find(P, "stream_triad").sms, 3);
  EXPECT_EQ(find(P, "stream_triad").sm_first, 127);
  EXPECT_EQ(P.gated_sms, 2);
}

// Queue of four on 20 SMs. c (compute): 5:40ms, 10:20, 15:13.333, 20:10,
// IPC/W .1 .125 .136 .143 -> opt 20. m (memory): 5:11, 10:10.2, 20:10,
// IPC/W .225 .162 .099 -> opt 5. Pair costs (sum of T(k)/T(20)):
//  c+c: 15 + 15 > 20, tie in powEf -> first shrinks 15 -> 10 -> 5:
//       T(5)/T(20) + T(15)/T(20) = 4 + 1.3333 = 5.3333
//  c+m: 15 + 5 = 20 fits: 1.3333 + 1.1 = 2.4333
//  m+m: 5 + 5 fits: 1.1 + 1.1 = 2.2
// {c1 c2}{m1 m2} = 7.5333, {c1 m1}{c2 m2} = {c1 m2}{c2 m1} = 4.8667 ->
// mixed pairs; the first found is (c1, m1). Equal costs: round 0 = c1+m1.
TEST(PowerAware, PairsAQueueToMinimiseSlowdown) {
  auto Pt = [](int Sms, double T, double Ipc, double W) {
    return json{{"sms", Sms}, {"time_ms", T}, {"ipc", Ipc}, {"power_w", W}};
  };
  json C = json::array({Pt(5, 40, 5, 50), Pt(10, 20, 10, 80),
                        Pt(15, 40.0 / 3, 15, 110), Pt(20, 10, 20, 140)});
  json M = json::array(
      {Pt(5, 11, 9, 40), Pt(10, 10.2, 9.7, 60), Pt(20, 10, 9.9, 100)});
  auto K = [](const char *Name, const json &Curve) {
    return json{{"name", Name}, {"isolated", {{"by_sms", Curve}}}};
  };
  Plan P = decide("power-aware",
                  profiles(gpu(20), json::array({K("c1", C), K("c2", C),
                                                 K("m1", M), K("m2", M)})));
  EXPECT_EQ(P.mode, "paired-queue");
  EXPECT_EQ(*find(P, "c1").round, 0);
  EXPECT_EQ(*find(P, "m1").round, 0);
  EXPECT_EQ(*find(P, "c2").round, 1);
  EXPECT_EQ(*find(P, "m2").round, 1);
  EXPECT_EQ(find(P, "c1").sms, 15);
  EXPECT_EQ(find(P, "m1").sms, 5);
  EXPECT_EQ(find(P, "m1").sm_first, 15);
  EXPECT_EQ(find(P, "c2").sm_first, 0);
  EXPECT_EQ(P.gated_sms, 0);
}
