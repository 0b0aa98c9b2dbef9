#include "../../controller/tests/fake_kernel.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/input_error.hpp"
#include "smpart/policy/profile_loader.hpp"
#include "smpart/profiler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

using namespace smpart;
using namespace smpart::profiler;

namespace {

// ------------------------------------------------------------- sweep ----

TEST(Sweep, DefaultScheduleHalvesSmsThenLowersCtas) {
  auto S = defaultSchedule(132, 4, 6);
  ASSERT_EQ(S.size(), 6u + 3u);
  EXPECT_EQ(S[0].sms, 132u);
  EXPECT_EQ(S[1].sms, 66u);
  EXPECT_EQ(S[5].sms, 4u);
  for (int I = 0; I < 6; ++I)
    EXPECT_EQ(S[I].ctas_per_sm, 4u);
  EXPECT_EQ(S[6].sms, 132u);
  EXPECT_EQ(S[6].ctas_per_sm, 3u);
  EXPECT_EQ(S[8].ctas_per_sm, 1u);
}

TEST(Sweep, EstimateRateIsTheLeastSquaresSlope) {
  EXPECT_DOUBLE_EQ(estimateRate({{0, 10}, {1, 30}, {2, 50}}), 20.0);
  // Noise around slope 5: sum((t-1.5)(d-7.75)) / sum((t-1.5)^2) = 25.5 / 5.
  EXPECT_NEAR(estimateRate({{0, 0}, {1, 6}, {2, 9}, {3, 16}}), 5.1, 1e-12);
  EXPECT_EQ(estimateRate({{1, 5}}), 0.0);
  EXPECT_EQ(estimateRate({{1, 5}, {1, 9}}), 0.0);
}

// A kernel whose true rate (blocks/ms) saturates at 40 SMs and whose new
// configuration takes 2 ms to settle (old CTAs draining at the old rate).
struct SimKernel : smpart::testing::FakeKernel {
  SimKernel(const std::vector<unsigned> &Ids, unsigned long long Total)
      : FakeKernel(1, "sim", Total, 4, Ids, nullptr) {}
  static double trueRate(unsigned Sms, unsigned Ctas) {
    return 10.0 * std::min(Sms, 40u) * (0.5 + 0.5 * std::min(Ctas, 3u) / 3.0);
  }
  void runFor(double FromMs, double ToMs) {
    const int Steps = static_cast<int>(std::lround((ToMs - FromMs) * 10));
    for (int I = 0; I < Steps; ++I) {
      const double T = FromMs + I * 0.1;
      double R = (T - ChangedAt < 2.0) ? OldRate : trueRate(Mask.count(), Ctas);
      Acc += R * 0.1;
      P.done = P.taken =
          std::min<unsigned long long>(P.total, (unsigned long long)Acc);
    }
  }
  Status setSmMask(const SmMask &M) override {
    OldRate = trueRate(Mask.count(), Ctas);
    ChangedAt = Now;
    return FakeKernel::setSmMask(M);
  }
  Status setCtasPerSm(unsigned N) override {
    if (N != Ctas) {
      OldRate = trueRate(Mask.count(), Ctas);
      ChangedAt = Now;
    }
    return FakeKernel::setCtasPerSm(N);
  }
  double Acc = 0, OldRate = 0, ChangedAt = -100, Now = 0;
};

TEST(Sweep, DriverMeasuresTheScalingCurveWithinFivePercent) {
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 132; ++I)
    Ids.push_back(I + I / 4); // real ids, not dense
  SimKernel K(Ids, 100000000ull);
  SweepOptions O;
  O.steps = defaultSchedule(132, 4, 6);
  O.dwell_ms = 20;
  SweepDriver D(K, Ids, O);
  double T = 0;
  while (true) {
    K.Now = T;
    if (!D.tick(T))
      break;
    K.runFor(T, T + 1.0);
    T += 1.0;
  }
  const auto &S = D.sweep().samples();
  ASSERT_EQ(S.size(), O.steps.size());
  for (const RateSample &R : S) {
    double Want = SimKernel::trueRate(R.step.sms, R.step.ctas_per_sm);
    EXPECT_NEAR(R.rate(), Want, 0.05 * Want)
        << R.step.sms << " SMs x " << R.step.ctas_per_sm;
  }
  // Restored to every SM and the occupancy, grown.
  EXPECT_EQ(K.Mask.count(), 132u);
  EXPECT_EQ(K.Ctas, 4u);
}

TEST(Sweep, StopsWhenTooLittleWorkIsLeft) {
  std::vector<unsigned> Ids;
  for (unsigned I = 0; I < 16; ++I)
    Ids.push_back(I);
  SimKernel K(Ids, 6000); // ~40 ms of work at 16 SMs
  SweepOptions O;
  O.steps = defaultSchedule(16, 4, 6);
  O.dwell_ms = 10;
  SweepDriver D(K, Ids, O);
  double T = 0;
  while (D.tick(T)) {
    K.Now = T;
    K.runFor(T, T + 1.0);
    T += 1.0;
    ASSERT_LT(T, 10000);
  }
  EXPECT_TRUE(D.sweep().finished());
  EXPECT_LT(D.sweep().samples().size(), O.steps.size());
  EXPECT_GE(D.sweep().samples().size(), 1u);
}

// ----------------------------------------------------------- builder ----

TEST(Builder, WritesLoadableProfilesCombiningLaunches) {
  policy::GpuSpec G;
  G.name = "test";
  G.num_sms = 8;
  ProfileBuilder B(G);
  B.addLaunch("k", 1000, policy::BlockShape{256, 32, 0});
  B.addSample("k", {{8, 4}, 400, 10}, 8); // 40 blocks/ms
  B.addSample("k", {{4, 4}, 200, 10}, 8); // 20 blocks/ms
  B.addSample("k", {{8, 2}, 300, 10}, 8); // 30 blocks/ms
  B.addLaunch("k", 1000);
  B.addSample("k", {{4, 4}, 300, 10}, 8, 150.0); // second launch: 30 -> mean 25
  NcuMetrics M;
  M.kernel = "k";
  M.llc_apki = 12.5;
  M.bw_util = 0.7;
  B.addMetrics(M);
  std::string Path = (std::filesystem::temp_directory_path() /
                      ("smpart-prof-" + std::to_string(getpid()) + ".json"))
                         .string();
  std::string Err;
  ASSERT_TRUE(B.write(Path, &Err)) << Err;
  policy::ProfileSet S = policy::loadProfiles(Path); // validates
  std::remove(Path.c_str());
  ASSERT_EQ(S.kernels.size(), 1u);
  const auto &K = S.kernels[0];
  EXPECT_EQ(*K.total_blocks, 1000);
  ASSERT_EQ(K.by_sms.size(), 2u);
  EXPECT_EQ(K.by_sms[0].sms, 4);
  EXPECT_DOUBLE_EQ(K.by_sms[0].time_ms, 1000.0 / 25.0); // 500 blocks / 20 ms
  EXPECT_DOUBLE_EQ(*K.by_sms[0].power_w, 150.0);
  EXPECT_EQ(K.by_sms[1].sms, 8);
  EXPECT_DOUBLE_EQ(K.by_sms[1].time_ms, 25.0);
  ASSERT_EQ(K.by_ctas.size(), 2u);
  EXPECT_EQ(K.by_ctas[0].ctas, 2);
  EXPECT_NEAR(K.by_ctas[0].time_ms, 1000.0 / 30.0, 1e-9);
  EXPECT_DOUBLE_EQ(*K.metrics.llc_apki, 12.5);
  EXPECT_DOUBLE_EQ(*K.metrics.bw_util, 0.7);
  EXPECT_EQ(K.block->threads, 256);
}

// -------------------------------------------------------------- NVML ----

TEST(Nvml, ReportsAbsenceWithTheLibraryNameOrSamplesPower) {
  NvmlPower &P = NvmlPower::instance();
  if (P.available()) {
    double W = 0;
    std::string Err;
    if (P.sampleWatts(0, W, &Err))
      EXPECT_GT(W, 0.0);
    else
      EXPECT_FALSE(Err.empty());
  } else {
    EXPECT_NE(P.reason().find("libnvidia-ml.so.1"), std::string::npos)
        << P.reason();
    double W = -1;
    std::string Err;
    EXPECT_FALSE(P.sampleWatts(0, W, &Err));
    EXPECT_EQ(Err, P.reason());
  }
}

// --------------------------------------------------------------- ncu ----

const char *DetailsCsv =
    "==PROF== Connected to process 1234 (/app)\n"
    "==PROF== Profiling \"sgemm\" - 0: 0%....50%....100% - 1 pass\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
    "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"12.5\"\n"
    "\"0\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"lts__t_requests_srcunit_tex.sum\",\"request\",\"1,000,000\"\n"
    "\"0\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"smsp__inst_executed.sum\",\"Minst\",\"40\"\n"
    "\"0\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"lts__t_sector_hit_rate.pct\",\"%\",\"80\"\n"
    // A second launch of sgemm: means of the percentages, sums of counts.
    "\"1\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"lts__t_sector_hit_rate.pct\",\"%\",\"60\"\n"
    "\"1\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"lts__t_requests_srcunit_tex.sum\",\"request\",\"1,000,000\"\n"
    "\"1\",\"1234\",\"app\",\"127.0.0.1\",\"sgemm(float const*, float*, int)\","
    "\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"smsp__inst_executed.sum\",\"inst\",\"40,000,000\"\n"
    "\"2\",\"1234\",\"app\",\"127.0.0.1\",\"void ns::scale<float, 2>(float*, "
    "\"\"q\"\")\","
    "\"1\",\"7\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\",\"9.0\",\"Command line "
    "profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"n/a\"\n";

TEST(Ncu, DetailsPageMapsMetricsAndCombinesLaunches) {
  auto M = importNcuCsv(DetailsCsv, "ncu.csv");
  ASSERT_EQ(M.size(), 2u);
  EXPECT_EQ(M[0].kernel, "sgemm");
  EXPECT_EQ(M[0].launches, 2u);
  // 2e6 requests over 8e7 warp instructions -> 25 per kilo-instruction.
  ASSERT_TRUE(M[0].llc_apki);
  EXPECT_DOUBLE_EQ(*M[0].llc_apki, 25.0);
  EXPECT_DOUBLE_EQ(*M[0].llc_hit_rate, 0.7);
  EXPECT_DOUBLE_EQ(*M[0].bw_util, 0.125);
  EXPECT_EQ(M[1].kernel, "ns::scale<float, 2>");
  EXPECT_FALSE(M[1].bw_util); // n/a
}

TEST(Ncu, RawPageWithUnitsRow) {
  const char *Raw =
      "\"ID\",\"Kernel "
      "Name\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"lts__t_requests_srcunit_tex.sum\",\"smsp__inst_executed.sum\","
      "\"lts__t_sector_hit_rate.pct\"\r\n"
      "\"\",\"\",\"%\",\"Krequest\",\"inst\",\"%\"\r\n"
      "\"0\",\"triad(double*, double const*, double const*, double)\",\"91.5\","
      "\"3\",\"1,000\",\"33.3\"\r\n";
  auto M = importNcuCsv(Raw, "raw.csv");
  ASSERT_EQ(M.size(), 1u);
  EXPECT_EQ(M[0].kernel, "triad");
  EXPECT_DOUBLE_EQ(*M[0].llc_apki, 3000.0);
  EXPECT_NEAR(*M[0].bw_util, 0.915, 1e-12);
  EXPECT_NEAR(*M[0].llc_hit_rate, 0.333, 1e-12);
}

TEST(Ncu, ErrorsNameFileAndLine) {
  auto Expect = [](const std::string &Text, const std::string &Want) {
    try {
      importNcuCsv(Text, "bad.csv");
      ADD_FAILURE() << "no error for: " << Text;
    } catch (const policy::InputError &E) {
      EXPECT_NE(std::string(E.what()).find(Want), std::string::npos)
          << E.what();
    }
  };
  Expect("hello\nworld\n",
         "bad.csv:1: (csv): expected an Nsight Compute CSV header");
  Expect("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
         "Value\"\n"
         "\"0\",\"k\",\"lts__t_sector_hit_rate.pct\",\"%\",\"eighty\"\n",
         "bad.csv:2: Metric Value: expected a number, got \"eighty\"");
  Expect("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
         "Value\"\n"
         "\"0\",\"k\",\"x\"\n",
         "bad.csv:2: (csv): expected 5 fields like the header, got 3");
  Expect("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
         "Value\"\n"
         "\"0\",\"k\n",
         "bad.csv:2: (csv): unterminated quoted field");
  Expect("\"ID\",\"Process ID\"\n\"0\",\"1\"\n",
         "bad.csv:1: (header): expected a \"Kernel Name\" column");
}

TEST(Ncu, BaseKernelName) {
  EXPECT_EQ(baseKernelName("void foo<int>(int*, float)"), "foo<int>");
  EXPECT_EQ(baseKernelName("bar"), "bar");
  EXPECT_EQ(baseKernelName("a::b(c<d>(e))"), "a::b");
}

} // namespace
