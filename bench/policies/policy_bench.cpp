// Decision time of each policy (loader excluded) for 2, 8 and 64 kernels on
// a 132-SM GPU with complete profiles. Target: 8 kernels in under 50 us.
#include "smpart/policy/curves.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>

using namespace smpart::policy;
using nlohmann::json;

namespace {

ProfileSet makeProfiles(int Kernels) {
  const int Sms = 132;
  std::mt19937_64 Rng(1234 + Kernels);
  auto Real = [&](double Lo, double Hi) {
    return std::uniform_real_distribution<double>(Lo, Hi)(Rng);
  };
  json Gpu = {{"name", "H200"},
              {"num_sms", Sms},
              {"max_threads_per_sm", 2048},
              {"max_blocks_per_sm", 32},
              {"regs_per_sm", 65536},
              {"smem_per_sm", 233472},
              {"clock_ghz", 1.98},
              {"ipc_max_per_sm", 4.0},
              {"cache_line_bytes", 128},
              {"noc_bw_gbs", 10000.0},
              {"llc_bw_gbs", 7000.0},
              {"mem_bw_gbs", 4800.0},
              {"mem_bw_util", 0.5},
              {"hsm", {{"c1", 0.4}, {"c2", 0.35}, {"epoch_cycles", 500000}}}};
  std::vector<int> Shared = evenSplit(Sms, Kernels);
  json Ks = json::array();
  for (int I = 0; I < Kernels; ++I) {
    bool Memory = I % 2 == 1;
    double Sat = Memory ? Real(16, 48) : Sms;
    json BySms = json::array();
    for (int S = 4; S <= Sms; S += 4) // 33 points, as a sweep would give
      BySms.push_back({{"sms", S},
                       {"time_ms", 1000.0 / std::min<double>(S, Sat)},
                       {"ipc", 2.0 * std::min<double>(S, Sat)},
                       {"power_w", 30.0 + 2.5 * S}});
    json ByCtas = json::array();
    for (int C = 1; C <= 8; ++C)
      ByCtas.push_back(
          {{"ctas", C},
           {"time_ms", 10.0 + std::abs(C - (Memory ? 4 : 8)) * 1.5}});
    Ks.push_back(
        {{"name", "k" + std::to_string(I)},
         {"block",
          {{"threads", 128}, {"regs_per_thread", 32}, {"smem_bytes", 2048}}},
         {"total_blocks", 100000},
         {"executed_blocks", 1000 * I},
         {"isolated", {{"by_sms", BySms}, {"by_ctas_per_sm", ByCtas}}},
         {"metrics",
          {{"llc_apki", Memory ? 120.0 : 4.0},
           {"llc_hit_rate", 0.3},
           {"bw_util", 0.6},
           {"rbh", 0.5}}},
         {"shared",
          {{"sms", Shared[I]},
           {"instructions", Memory ? 2e7 : 1e8},
           {"cycles", 5e5},
           {"mem_accesses", Memory ? 3e6 : 2e5},
           {"bw_util", Memory ? 0.5 : 0.05},
           {"rbh", 0.5}}},
         {"priority", I == 0 ? "high" : "normal"}});
  }
  json Doc = {{"schema", "smpart.profiles/1"}, {"gpu", Gpu}, {"kernels", Ks}};
  return parseProfiles(Doc.dump(), "bench.json");
}

void decide(benchmark::State &State, const Policy *P) {
  ProfileSet Set = makeProfiles(static_cast<int>(State.range(0)));
  PolicyOptions O;
  for (auto _ : State) {
    Plan Out = P->decide(Set, O);
    benchmark::DoNotOptimize(Out);
  }
}

int registerAll() {
  for (const Policy *P : allPolicies())
    benchmark::RegisterBenchmark(("decide/" + std::string(P->name())).c_str(),
                                 decide, P)
        ->Arg(2)
        ->Arg(8)
        ->Arg(64)
        ->Unit(benchmark::kMicrosecond);
  return 0;
}
const int Registered = registerAll();

} // namespace

BENCHMARK_MAIN();
