// A decision (`smpart.plan/1`): per kernel an SM range, CTAs per SM and
// bypassing CTAs per SM, plus the policy's mode, gated SMs and notes.
// Entries are of two kinds (docs/plan.md): rewritten kernels, whose ranges
// are ordinal positions over the SMs no opaque partition holds and which
// move live, and opaque partitions (green contexts running work smpart
// cannot rewrite), whose `sms` is the size planned for their next launch
// and whose `held_sm_ids` are the real SM ids they hold now.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace smpart::policy {

inline constexpr const char *PlanSchema = "smpart.plan/1";
inline constexpr const char *KindRewritten = "rewritten";
inline constexpr const char *KindOpaque = "opaque";

struct KernelDecision {
  std::string name;
  int sms = 0;
  int sm_first = 0;
  int ctas_per_sm = 0; // 0: launch default (occupancy unknown)
  int bypass_ctas_per_sm = 0;
  std::string klass = "unclassified"; // "class" in JSON
  std::optional<double> predicted_np;
  std::optional<int> round; // power-aware queues: which pair runs when
  /// KindRewritten or KindOpaque.
  std::string kind = KindRewritten;
  /// Opaque entries: the real SM ids the partition holds now (its size
  /// changes only at its next launch; `sms` is the planned size).
  std::vector<unsigned> held_sm_ids;
};

struct Plan {
  std::string policy;
  std::string mode;
  /// SMs the rewritten entries are planned over: the GPU's, minus those
  /// opaque partitions hold.
  int num_sms = 0;
  /// The GPU's SMs when opaque entries exist (0: same as num_sms).
  int gpu_sms = 0;
  std::vector<KernelDecision> kernels;
  int gated_sms = 0;
  std::vector<std::string> notes;
};

nlohmann::ordered_json planToJson(const Plan &P);

/// Parses a plan document; errors name \p Source and the JSON path. Unknown
/// fields (a typo such as "ctas_per_smm") are ignored, with a warning
/// naming their path in \p Warnings when given.
Plan parsePlan(const std::string &Text, const std::string &Source,
               std::vector<std::string> *Warnings = nullptr);

/// Lays the kernels' ranges out contiguously from SM 0 in vector order.
void layOutContiguously(Plan &P);

/// Lays the kernels' ranges out contiguously from SM 0 in the order they
/// start in \p Current (matched by name, the k-th of a name to the k-th;
/// kernels absent from it or holding no SM there go last, in vector
/// order). A kernel whose SM count did not change then moves only by the
/// changes of the kernels before it, and not at all when they cancel: a
/// re-plan moves no more SMs than the counts ask.
void layOutInTheOrderOf(Plan &P, const Plan &Current);

} // namespace smpart::policy
