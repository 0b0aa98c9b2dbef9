#include "latency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace smpart::sim {

bool LatencyReport::meetsTargets() const {
  if (critical.empty() || best_effort < ThroughputTarget)
    return false;
  return std::all_of(
      critical.begin(), critical.end(),
      [](const LatencyStats &S) { return S.p99Ratio() <= LatencyTarget; });
}

bool isLatencyCritical(const Mix &M, const std::string &Kernel) {
  for (const policy::KernelProfile &K : M.truth.kernels)
    if (K.name == Kernel)
      return K.priority == policy::Priority::High;
  return false;
}

bool hasLatencyCriticalStream(const Mix &M) {
  std::map<std::string, int> Count;
  bool Others = false;
  for (const Launch &L : M.launches) {
    ++Count[L.kernel];
    Others = Others || !isLatencyCritical(M, L.kernel);
  }
  return Others && std::any_of(Count.begin(), Count.end(), [&](const auto &C) {
           return C.second > 1 && isLatencyCritical(M, C.first);
         });
}

double percentile(std::vector<double> V, double P) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  const double Rank = std::ceil(P / 100.0 * static_cast<double>(V.size()));
  const std::size_t I =
      static_cast<std::size_t>(std::clamp(Rank, 1.0, double(V.size())));
  return V[I - 1];
}

LatencyReport latencyOf(const Mix &M, const RunResult &R) {
  LatencyReport Out;
  std::map<std::string, std::vector<double>> Latency;
  std::map<std::string, double> Alone;
  double BeAlone = 0, BeStart = 1e300, BeEnd = 0;
  bool BeFinished = true;
  for (const KernelResult &K : R.kernels) {
    const bool Done = K.finish_us > 0;
    if (isLatencyCritical(M, K.name)) {
      if (!Latency.count(K.name))
        Out.critical.push_back({K.name});
      // An unfinished launch waited at least until the end of the run.
      Latency[K.name].push_back((Done ? K.finish_us : R.end_us) - K.arrival_us);
      Alone[K.name] = std::max(Alone[K.name], K.alone_us);
      continue;
    }
    BeAlone += K.alone_us;
    BeStart = std::min(BeStart, K.arrival_us);
    BeEnd = std::max(BeEnd, Done ? K.finish_us : R.end_us);
    BeFinished = BeFinished && Done;
  }
  for (LatencyStats &S : Out.critical) {
    const std::vector<double> &V = Latency[S.kernel];
    S.launches = V.size();
    S.alone_us = Alone[S.kernel];
    S.p50_us = percentile(V, 50);
    S.p99_us = percentile(V, 99);
    S.max_us = *std::max_element(V.begin(), V.end());
  }
  if (BeAlone > 0 && BeEnd > BeStart && BeFinished)
    Out.best_effort = BeAlone / (BeEnd - BeStart);
  return Out;
}

std::vector<std::string> latencyPolicies() {
  return {"even", "priority", "hsm-qos", "hsm-qos-online"};
}

void printLatency(const LatencyReport &R) {
  for (const LatencyStats &S : R.critical)
    std::printf("  latency %s (%zu launches): p50 %.3f ms, p99 %.3f ms, "
                "alone %.3f ms, p99 / alone %.3f\n",
                S.kernel.c_str(), S.launches, S.p50_us / 1000.0,
                S.p99_us / 1000.0, S.alone_us / 1000.0, S.p99Ratio());
  std::printf("  best-effort throughput / alone %.3f; targets (p99 / alone "
              "<= %.2f, best effort >= %.2f) %s\n",
              R.best_effort, LatencyTarget, ThroughputTarget,
              R.meetsTargets() ? "met" : "missed");
}

bool printLatencyTable(const std::vector<Mix> &Mixes, bool Noise) {
  std::printf("| mix | policy | kernel | launches | p50 ms | p99 ms | alone "
              "ms | p99 / alone | best effort / alone | targets |\n"
              "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
  bool Ok = true;
  for (const Mix &M : Mixes)
    for (const std::string &Name : latencyPolicies()) {
      RunOptions O;
      O.noise = Noise;
      O.spatial = isSpatialPolicy(Name);
      const RunResult R = runPolicy(M, Name, O);
      if (!R.completed || R.shared_sm_steps || R.exactly_once_violations) {
        std::fprintf(stderr,
                     "smpart_corun_sim: %s under %s: completed %d, steps "
                     "with a shared SM %llu, exactly-once violations %llu\n",
                     M.source.c_str(), Name.c_str(), R.completed,
                     R.shared_sm_steps, R.exactly_once_violations);
        Ok = false;
      }
      const LatencyReport L = latencyOf(M, R);
      for (const LatencyStats &S : L.critical)
        std::printf("| %s | %s | %s | %zu | %.3f | %.3f | %.3f | %.3f | %.3f "
                    "| %s |\n",
                    M.name.c_str(), Name.c_str(), S.kernel.c_str(), S.launches,
                    S.p50_us / 1000.0, S.p99_us / 1000.0, S.alone_us / 1000.0,
                    S.p99Ratio(), L.best_effort,
                    L.meetsTargets() ? "met" : "missed");
    }
  return Ok;
}

} // namespace smpart::sim
