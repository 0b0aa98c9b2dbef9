// A decision (`smpart.plan/1`): per kernel an SM range, CTAs per SM and
// bypassing CTAs per SM, plus the policy's mode, gated SMs and notes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace smpart::policy {

inline constexpr const char *PlanSchema = "smpart.plan/1";

struct KernelDecision {
  std::string name;
  int sms = 0;
  int sm_first = 0;
  int ctas_per_sm = 0; // 0: launch default (occupancy unknown)
  int bypass_ctas_per_sm = 0;
  std::string klass = "unclassified"; // "class" in JSON
  std::optional<double> predicted_np;
  std::optional<int> round; // power-aware queues: which pair runs when
};

struct Plan {
  std::string policy;
  std::string mode;
  int num_sms = 0;
  std::vector<KernelDecision> kernels;
  int gated_sms = 0;
  std::vector<std::string> notes;
};

nlohmann::ordered_json planToJson(const Plan &P);

/// Parses a plan document; errors name \p Source and the JSON path.
Plan parsePlan(const std::string &Text, const std::string &Source);

/// Lays the kernels' ranges out contiguously from SM 0 in vector order.
void layOutContiguously(Plan &P);

} // namespace smpart::policy
