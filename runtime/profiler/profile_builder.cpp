#include "smpart/profiler.hpp"

#include "smpart/detail/output_file.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace smpart::profiler {

ProfileBuilder::ProfileBuilder(policy::GpuSpec G) : Gpu(std::move(G)) {}

void ProfileBuilder::addLaunch(const std::string &Name,
                               unsigned long long TotalBlocks,
                               std::optional<policy::BlockShape> Block) {
  auto [It, New] = Kernels.try_emplace(Name);
  if (New)
    Order.push_back(Name);
  Kernel &K = It->second;
  ++K.launches;
  // Launches of one name may differ in size; the curve is per logical
  // block, so the profile keeps the largest launch as total_blocks.
  K.total_blocks = std::max(K.total_blocks, TotalBlocks);
  if (Block)
    K.block = Block;
}

void ProfileBuilder::addSample(const std::string &Name, const RateSample &S,
                               unsigned NumSms, std::optional<double> PowerW) {
  auto [It, New] = Kernels.try_emplace(Name);
  if (New)
    Order.push_back(Name);
  Kernel &K = It->second;
  if (S.ms <= 0 || S.blocks <= 0)
    return;
  // On all SMs: a point of the CTA curve; at the sweep's CTAs/SM with
  // fewer SMs: a point of the SM curve. The all-SMs, full-occupancy point
  // belongs to both.
  auto add = [&](Acc &A) {
    A.blocks += S.blocks;
    A.ms += S.ms;
    if (PowerW) {
      A.power_sum += *PowerW;
      ++A.power_n;
    }
  };
  if (S.step.sms == NumSms)
    add(K.by_ctas[S.step.ctas_per_sm]);
  const bool FullCtas =
      K.by_ctas.empty() || S.step.ctas_per_sm >= K.by_ctas.rbegin()->first;
  if (S.step.sms < NumSms || FullCtas)
    add(K.by_sms[S.step.sms]);
}

void ProfileBuilder::addMetrics(const NcuMetrics &M) {
  auto [It, New] = Kernels.try_emplace(M.kernel);
  if (New)
    Order.push_back(M.kernel);
  It->second.metrics = M;
}

nlohmann::ordered_json ProfileBuilder::toJson() const {
  nlohmann::ordered_json G = {{"name", Gpu.name}, {"num_sms", Gpu.num_sms}};
  auto optI = [&](const char *K, const std::optional<long long> &V) {
    if (V)
      G[K] = *V;
  };
  auto optD = [&](const char *K, const std::optional<double> &V) {
    if (V)
      G[K] = *V;
  };
  optI("max_threads_per_sm", Gpu.max_threads_per_sm);
  optI("max_blocks_per_sm", Gpu.max_blocks_per_sm);
  optI("regs_per_sm", Gpu.regs_per_sm);
  optI("smem_per_sm", Gpu.smem_per_sm);
  optD("clock_ghz", Gpu.clock_ghz);
  optD("mem_bw_gbs", Gpu.mem_bw_gbs);
  optD("cache_line_bytes", Gpu.cache_line_bytes);

  nlohmann::ordered_json Ks = nlohmann::ordered_json::array();
  for (const std::string &Name : Order) {
    const Kernel &K = Kernels.at(Name);
    nlohmann::ordered_json J = {{"name", Name}};
    if (K.block)
      J["block"] = {{"threads", K.block->threads},
                    {"regs_per_thread", K.block->regs_per_thread},
                    {"smem_bytes", K.block->smem_bytes}};
    if (K.total_blocks)
      J["total_blocks"] = K.total_blocks;
    const double Total = static_cast<double>(K.total_blocks);
    auto timeOf = [&](const Acc &A) { return Total * A.ms / A.blocks; };
    nlohmann::ordered_json BySms = nlohmann::ordered_json::array();
    if (K.total_blocks)
      for (auto &[Sms, A] : K.by_sms) {
        if (Sms < 1 || static_cast<int>(Sms) > Gpu.num_sms)
          continue;
        nlohmann::ordered_json P = {{"sms", Sms}, {"time_ms", timeOf(A)}};
        if (A.power_n)
          P["power_w"] = A.power_sum / A.power_n;
        BySms.push_back(std::move(P));
      }
    nlohmann::ordered_json ByCtas = nlohmann::ordered_json::array();
    if (K.total_blocks)
      for (auto &[Ctas, A] : K.by_ctas)
        if (Ctas >= 1)
          ByCtas.push_back({{"ctas", Ctas}, {"time_ms", timeOf(A)}});
    if (!BySms.empty() || !ByCtas.empty()) {
      J["isolated"] = nlohmann::ordered_json::object();
      if (!BySms.empty())
        J["isolated"]["by_sms"] = BySms;
      if (!ByCtas.empty())
        J["isolated"]["by_ctas_per_sm"] = ByCtas;
    }
    if (K.metrics) {
      nlohmann::ordered_json M = nlohmann::ordered_json::object();
      if (K.metrics->llc_apki)
        M["llc_apki"] = *K.metrics->llc_apki;
      if (K.metrics->llc_hit_rate)
        M["llc_hit_rate"] = *K.metrics->llc_hit_rate;
      if (K.metrics->bw_util)
        M["bw_util"] = *K.metrics->bw_util;
      if (!M.empty())
        J["metrics"] = M;
    }
    Ks.push_back(std::move(J));
  }
  return {{"schema", policy::ProfilesSchema}, {"gpu", G}, {"kernels", Ks}};
}

bool ProfileBuilder::write(const std::string &Path, std::string *Error) const {
  // Kernel names are the program's: bytes that are not UTF-8 become
  // U+FFFD rather than an exception at exit (ProfileObserver::finish).
  const std::string Text =
      toJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  std::string Why;
  if (!smpart::detail::writeOutputFile(Path, Text, &Why)) {
    if (Error)
      *Error = "profile: " + Why;
    return false;
  }
  return true;
}

} // namespace smpart::profiler
