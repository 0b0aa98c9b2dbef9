// Latency-critical co-location (README "Latency-critical co-location"):
// what a stream of short high-priority kernels beside long best-effort
// ones is judged by. Per latency-critical kernel, the launch latency
// (arrival to completion) at p50 and p99 against the same launch alone on
// the model; for the best-effort kernels, their throughput against alone.
#pragma once

#include "corun.hpp"
#include "mix.hpp"

#include <string>
#include <vector>

namespace smpart::sim {

/// The targets the controller README quotes.
inline constexpr double LatencyTarget = 1.25;   ///< p99 / alone, at most
inline constexpr double ThroughputTarget = 0.6; ///< best effort / alone

struct LatencyStats {
  std::string kernel;
  std::size_t launches = 0;
  double alone_us = 0; ///< one launch alone on the whole GPU, no noise
  double p50_us = 0, p99_us = 0, max_us = 0;
  double p99Ratio() const { return alone_us > 0 ? p99_us / alone_us : 0; }
};

struct LatencyReport {
  /// One entry per high-priority kernel name, in order of first launch.
  std::vector<LatencyStats> critical;
  /// Best-effort work per time against alone: the best-effort launches'
  /// times alone on the whole GPU over the span from the first one's
  /// arrival to the last one's completion (for one kernel, its NP). 0 when
  /// there is none.
  double best_effort = 0;
  bool meetsTargets() const;
};

/// A kernel is latency-critical when its profile says "priority": "high";
/// a mix is a latency-critical co-location when such a kernel is launched
/// more than once beside other kernels.
bool isLatencyCritical(const Mix &M, const std::string &Kernel);
bool hasLatencyCriticalStream(const Mix &M);

/// Nearest-rank percentile (\p P in (0, 100]) of \p Values; 0 when empty.
double percentile(std::vector<double> Values, double P);

LatencyReport latencyOf(const Mix &M, const RunResult &R);

/// The policies the latency report compares: plain sharing, the plain
/// priority mode and HSM-QoS offline and online.
std::vector<std::string> latencyPolicies();

/// Prints \p R's latency lines under a single run's figures.
void printLatency(const LatencyReport &R);

/// `smpart_corun_sim --latency`: per mix, every latencyPolicies() entry as
/// a Markdown table row (p50, p99, alone, p99 / alone, best effort /
/// alone, targets met). False when a run broke a controller invariant
/// (said on stderr).
bool printLatencyTable(const std::vector<Mix> &Mixes, bool Noise);

} // namespace smpart::sim
