// Static configurations and the exhaustive search for the best one on the
// model (README "Best static configuration").
//
// A static configuration fixes, per kernel name, a share of the SMs (or
// all SMs, when the configuration shares them), CTAs per SM and bypassing
// CTAs per SM. It is applied through the controller as a policy: at each
// decision the kernels present split the SMs in proportion to their
// weights, so it is work-conserving (a kernel left alone gets the whole
// GPU at its occupancy) and comparable with the policies, which re-plan
// on the same events.
#pragma once

#include "corun.hpp"
#include "objective.hpp"

#include <map>
#include <optional>

namespace smpart::sim {

struct StaticShare {
  double weight = 1;
  int ctas_per_sm = 0; ///< 0: occupancy
  int bypass_ctas_per_sm = 0;
};

struct StaticConfig {
  bool sharing = false; ///< every kernel on every SM
  std::map<std::string, StaticShare> shares;
  std::string describe() const;
};

class StaticPolicy : public policy::Policy {
public:
  explicit StaticPolicy(StaticConfig C) : Config(std::move(C)) {}
  std::string_view name() const override { return "static"; }
  std::string_view summary() const override {
    return "a fixed configuration (simulator)";
  }
  policy::Plan decide(const policy::ProfileSet &Set,
                      const policy::PolicyOptions &Options) const override;

private:
  StaticConfig Config;
};

/// One configuration of the grid and what it ran to.
struct StaticRun {
  StaticConfig config;
  RunResult result;
};

struct SearchResult {
  StaticConfig best;
  RunResult result;
  std::size_t evaluated = 0;
  /// The best SM partition (no SM shared), and the best configuration
  /// that shares every SM: a policy that decides in one of the two spaces
  /// (CD-search and HSM partition SMs, TLP sets CTAs on shared SMs) is
  /// also measured against the best its space holds.
  std::optional<StaticRun> spatial, sharing;
};

/// Every configuration of the grid (README) run on the model with the same
/// noise as the policies; the best by \p Goal (objective.hpp).
SearchResult searchBestStatic(const Mix &M, const RunOptions &O = {},
                              Objective Goal = Objective::Stp);
/// The same, the grid run once for several objectives: one result per
/// entry of \p Goals, in order.
std::vector<SearchResult>
searchBestStatics(const Mix &M, const RunOptions &O,
                  const std::vector<Objective> &Goals);

/// The grid itself (for tests and the README's count).
std::vector<StaticConfig> staticGrid(const Mix &M);

} // namespace smpart::sim
