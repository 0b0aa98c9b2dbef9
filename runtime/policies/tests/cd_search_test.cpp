#include "test_support.hpp"

#include "smpart/policy/cd_search_policy.hpp"
#include "smpart/policy/curves.hpp"

#include <gtest/gtest.h>

using namespace smpart::policy;
using namespace smpart::policy::test;

TEST(CdSearch, OffSmBandwidthModel) {
  // Eq. 1: 4 IPC * 80/1000 APKI * 128 B * 1.98 GHz = 81.1008 GB/s per SM.
  EXPECT_NEAR(cdBandwidthPerSm(4.0, 80.0, 128, 1.98), 81.1008, 1e-9);
  // Eq. 2: min(10000, 7000*0.3 + 4800*0.7*0.5) = min(10000, 2100 + 1680).
  EXPECT_NEAR(cdOffSmBandwidth(10000, 7000, 4800, 0.5, 0.3), 3780.0, 1e-9);
  // NoC-bound: min(1000, ...) = 1000.
  EXPECT_NEAR(cdOffSmBandwidth(1000, 7000, 4800, 0.5, 0.3), 1000.0, 1e-9);
}

// compute_memory_pair example, classification on 66 SMs each:
//  stream: 81.1008 * 66 = 5352.65 GB/s > 3780 -> memory.
//  sgemm:  4*0.005*128*1.98 = 5.0688 * 66 = 334.5 GB/s
//          < min(10000, 7000*0.8 + 4800*0.2*0.5 = 6080) -> compute.
// Performance mode, stream from 66 SMs, perf = 1/time interpolated in 1/t:
//  perf(66) = 0.1, threshold 0.095.
//  perf(48) = 1/10.5 = 0.095238 >= 0.095 (every even step 64..48 is
//  above it: perf is increasing in SMs).
//  perf(46) = 1/12 + (1/10.5 - 1/12) * 13/15 = 0.093651 < 0.095 -> stop.
//  stream 48 SMs [84, 132), sgemm 132 - 48 = 84 SMs [0, 84).
TEST(CdSearch, PerformanceModeHandExample) {
  Plan P = decide("cd-search", example("compute_memory_pair.json"), true);
  EXPECT_EQ(P.mode, "performance");
  const KernelDecision &Mem = find(P, "stream_triad");
  const KernelDecision &Comp = find(P, "sgemm");
  EXPECT_EQ(Mem.klass, "memory");
  EXPECT_EQ(Comp.klass, "compute");
  EXPECT_EQ(Mem.sms, 48);
  EXPECT_EQ(Comp.sms, 84);
  EXPECT_EQ(Comp.sm_first, 0);
  EXPECT_EQ(Mem.sm_first, 84);
  EXPECT_EQ(P.gated_sms, 0);
  // 10 probes (64, 62, ..., 46) plus classification and mode notes.
  std::size_t Probes = 0;
  for (const std::string &N : P.notes)
    Probes += N.find("probe") != std::string::npos;
  EXPECT_EQ(Probes, 10u);
}

// memory_memory_pair example: both memory (spmv: 4*0.06*128*1.98*66 =
// 4014.6 > 1400 + 1920 = 3320). Power mode, share 66 each:
//  stream: perf(1) = (1/40)*(1/8) = 0.003125, perf(66) = 0.1, ratio 32 ->
//   tentative 32; perf(32) = 0.081232 < 0.095; +1 ... perf(47) = 0.094444,
//   perf(48) = 0.095238 >= 0.095 -> 48.
//  spmv: perf(1) = (1/30)/8 = 0.0041667, perf(66) = 1/8.6 = 0.116279,
//   ratio 27.9 -> 28; threshold 0.110465; perf(47) = 0.110370 < it,
//   perf(48) = 1/9 = 0.111111 -> 48.
//  Gated: 132 - 96 = 36.
TEST(CdSearch, PowerModeHandExample) {
  Plan P = decide("cd-search", example("memory_memory_pair.json"));
  EXPECT_EQ(P.mode, "power");
  EXPECT_EQ(find(P, "stream_triad").sms, 48);
  EXPECT_EQ(find(P, "spmv").sms, 48);
  EXPECT_EQ(find(P, "spmv").sm_first, 48);
  EXPECT_EQ(P.gated_sms, 36);
}

TEST(CdSearch, PowerModeTentativeCount) {
  ProfileSet S = example("memory_memory_pair.json");
  std::vector<std::string> Steps;
  EXPECT_EQ(cdPowerModeSms(S.kernels[0], 66, 0.05, &Steps), 48);
  EXPECT_NE(Steps.front().find("tentative 32"), std::string::npos)
      << Steps.front();
}

TEST(CdSearch, ComputeOnlyIsEven) {
  Plan P = decide("cd-search", example("compute_compute_pair.json"));
  EXPECT_EQ(P.mode, "even");
  EXPECT_EQ(P.kernels[0].sms, 66);
  EXPECT_EQ(P.kernels[1].sms, 66);
  EXPECT_EQ(P.kernels[1].klass, "compute");
}

// Sec. 7.4.3 with four kernels on 132 SMs: share 33 each. Memory kernels
// (apki 200, hit 0.3: Eq. 1 gives
// 202.75*33 = 6691 > 3780). Curve: 8:40, 16:21, 33:12 (stream-like).
// perf(33) = 1/12, threshold 0.079167; perf(31) = 1/21 + (1/12-1/21)*15/17
// = 0.079132 < threshold -> stays 33. So the memory kernels keep 33 and
// the compute kernels split 132 - 66 = 66 -> 33, 33.
// With a flatter curve (16:12.5, 33:12): perf(31) = 0.08 + 0.003333*15/17
// = 0.082941 >= 0.079167 -> 31; perf(29) = 0.082353 -> 29; ...; perf(17) =
// 0.080196 -> 17; perf(15) = 1/40 + (1/12.5 - 1/40)*7/8 = 0.073125 -> stop.
// Memory kernel gets 17, the compute kernels split 132 - 33 - 17 = 82 -> 41.
TEST(CdSearch, FourKernelExtension) {
  json G = gpu(132);
  auto Mem = [](const char *Name, double T16) {
    return json{
        {"name", Name},
        {"metrics", {{"llc_apki", 200.0}, {"llc_hit_rate", 0.3}}},
        {"isolated",
         {{"by_sms", json::array({{{"sms", 8}, {"time_ms", 40.0}},
                                  {{"sms", 16}, {"time_ms", T16}},
                                  {{"sms", 33}, {"time_ms", 12.0}}})}}}};
  };
  auto Comp = [](const char *Name) {
    return json{{"name", Name},
                {"metrics", {{"llc_apki", 1.0}, {"llc_hit_rate", 0.9}}}};
  };
  Plan P = decide("cd-search",
                  profiles(G, json::array({Mem("m1", 21.0), Comp("c1"),
                                           Mem("m2", 12.5), Comp("c2")})));
  EXPECT_EQ(P.mode, "performance");
  EXPECT_EQ(find(P, "m1").sms, 33);
  EXPECT_EQ(find(P, "m2").sms, 17);
  EXPECT_EQ(find(P, "c1").sms, 41);
  EXPECT_EQ(find(P, "c2").sms, 41);
  EXPECT_EQ(find(P, "c1").sm_first, 33);
  EXPECT_EQ(find(P, "m2").sm_first, 74);
  EXPECT_EQ(find(P, "c2").sm_first, 91);
}
