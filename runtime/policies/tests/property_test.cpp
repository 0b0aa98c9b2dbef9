// Properties every decision must have, on seeded random profiles:
// spatial ranges are disjoint and inside the GPU, gated_sms is what is left,
// per-SM resources are never exceeded, and the same input gives the same
// output.
#include "random_profiles.hpp"
#include "test_support.hpp"

#include "smpart/policy/curves.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace smpart::policy;
using namespace smpart::policy::test;

namespace smpart::policy::test {

nlohmann::json randomProfileDocument(std::mt19937_64 &Rng, int MaxKernels) {
  auto Int = [&](int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(Rng);
  };
  auto Real = [&](double Lo, double Hi) {
    return std::uniform_real_distribution<double>(Lo, Hi)(Rng);
  };
  int Sms = Int(2, 160);
  json G = gpu(Sms);
  int K = Int(1, std::min(Sms, MaxKernels));
  std::vector<int> Shared = evenSplit(Sms, K);
  json Kernels = json::array();
  for (int I = 0; I < K; ++I) {
    json BySms = json::array();
    double Sat = Real(1.0, Sms);      // SMs at which it saturates
    double Work = Real(10.0, 1000.0); // time on one SM
    for (int S = Int(1, std::min(8, Sms)); S <= Sms; S += Int(1, 16))
      BySms.push_back({{"sms", S},
                       {"time_ms", Work / std::min<double>(S, Sat)},
                       {"ipc", Real(1, 100) * std::min<double>(S, Sat)},
                       {"power_w", Real(20, 40) + 2.0 * S}});
    json ByCtas = json::array();
    int Best = Int(1, 8);
    for (int C = 1; C <= 10; C += Int(1, 3))
      ByCtas.push_back(
          {{"ctas", C}, {"time_ms", 10.0 + std::abs(C - Best) * Real(0.1, 3)}});
    int Threads = 32 * Int(1, 32);
    Kernels.push_back(
        {{"name", "k" + std::to_string(I)},
         {"block",
          {{"threads", Threads},
           {"regs_per_thread", Int(16, std::min(255, 2048 * 32 / Threads))},
           {"smem_bytes", 1024 * Int(0, 96)}}},
         {"total_blocks", Int(1000, 100000)},
         {"executed_blocks", Int(0, 999)},
         {"isolated", {{"by_sms", BySms}, {"by_ctas_per_sm", ByCtas}}},
         {"metrics",
          {{"llc_apki", Real(0, 150)},
           {"llc_hit_rate", Real(0, 1)},
           {"bw_util", Real(0, 1)},
           {"rbh", Real(0, 1)}}},
         {"shared",
          {{"sms", Shared[I]},
           {"instructions", Real(1e6, 1e9)},
           {"cycles", 5e5},
           {"mem_accesses", Real(0, 1e7)},
           {"bw_util", Real(0, 1)},
           {"rbh", Real(0, 1)}}},
         {"priority", I == 0 ? "high" : "normal"}});
    if (Int(0, 1))
      Kernels.back()["metrics"]["type"] =
          std::array{"Up", "Optimal", "Down"}[Int(0, 2)];
  }
  return {{"schema", "smpart.profiles/1"}, {"gpu", G}, {"kernels", Kernels}};
}

} // namespace smpart::policy::test

namespace {

bool sharesSms(const std::string &Policy) {
  return Policy == "greedy" || Policy == "tlp";
}

void checkPlan(const Plan &P, const ProfileSet &S, const std::string &Policy) {
  const int N = S.gpu.num_sms;
  ASSERT_EQ(P.kernels.size(), S.kernels.size());
  for (std::size_t I = 0; I < P.kernels.size(); ++I)
    EXPECT_EQ(P.kernels[I].name, S.kernels[I].name) << "input order";
  if (sharesSms(Policy)) {
    SmLoad Load;
    for (std::size_t I = 0; I < P.kernels.size(); ++I) {
      EXPECT_EQ(P.kernels[I].sm_first, 0);
      EXPECT_EQ(P.kernels[I].sms, N);
      EXPECT_GE(P.kernels[I].ctas_per_sm, 1);
      Load.add(*S.kernels[I].block, P.kernels[I].ctas_per_sm);
    }
    bool Fallback =
        P.mode == "fallback-one-cta" ||
        std::any_of(P.notes.begin(), P.notes.end(), [](const std::string &N) {
          return N.find("block scheduler queues") != std::string::npos;
        });
    if (!Fallback) {
      EXPECT_TRUE(fitsSm(S.gpu, Load)) << Policy << " exceeds per-SM resources";
    }
    return;
  }
  // Spatial: per round, disjoint ranges inside [0, N).
  std::map<int, std::vector<bool>> Used;
  for (std::size_t I = 0; I < P.kernels.size(); ++I) {
    const KernelDecision &D = P.kernels[I];
    EXPECT_GE(D.sms, 1) << Policy;
    EXPECT_GE(D.sm_first, 0);
    ASSERT_LE(D.sm_first + D.sms, N) << Policy;
    std::vector<bool> &U =
        Used.try_emplace(D.round.value_or(0), N, false).first->second;
    for (int Sm = D.sm_first; Sm < D.sm_first + D.sms; ++Sm) {
      EXPECT_FALSE(U[Sm]) << Policy << ": SM " << Sm << " given twice";
      U[Sm] = true;
    }
    // One kernel per SM: its CTAs must fit an SM on their own.
    SmLoad Load;
    Load.add(*S.kernels[I].block, D.ctas_per_sm);
    EXPECT_TRUE(fitsSm(S.gpu, Load)) << Policy;
  }
  const std::vector<bool> &Round0 = Used.begin()->second;
  int Idle = static_cast<int>(std::count(Round0.begin(), Round0.end(), false));
  EXPECT_EQ(P.gated_sms, Idle) << Policy;
  if (Policy == "even" || Policy == "hsm-fair" || Policy == "hsm-qos") {
    EXPECT_EQ(P.gated_sms, 0) << Policy;
  }
}

} // namespace

TEST(Properties, RandomProfilesEveryPolicy) {
  std::mt19937_64 Rng(20240531);
  for (int Case = 0; Case < 150; ++Case) {
    json Doc = randomProfileDocument(Rng);
    ProfileSet S = parseProfiles(Doc.dump(), "random.json");
    for (const Policy *Pol : allPolicies()) {
      SCOPED_TRACE("case " + std::to_string(Case) + " policy " +
                   std::string(Pol->name()));
      PolicyOptions O;
      O.explain = Case % 2 == 0;
      Plan A = Pol->decide(S, O);
      checkPlan(A, S, std::string(Pol->name()));
      Plan B = Pol->decide(S, O);
      EXPECT_EQ(planToJson(A).dump(), planToJson(B).dump())
          << "not deterministic";
    }
  }
}

TEST(Properties, ExamplesEveryPolicy) {
  // Every policy takes every bundled example (hsm-* need "shared" and one
  // high-priority kernel; each example has them).
  for (const char *File :
       {"compute_memory_pair.json", "compute_compute_pair.json",
        "memory_memory_pair.json"}) {
    ProfileSet S = example(File);
    for (const Policy *Pol : allPolicies())
      checkPlan(Pol->decide(S, {}), S, std::string(Pol->name()));
  }
}
