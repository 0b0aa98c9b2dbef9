// A co-run mix (README "Mixes"): a `smpart.profiles/1` document (the
// model's truth, and what the controller is given) with one more key,
// "mix": launches, kernels the controller gets no profile for, and the
// simulator's settings.
#pragma once

#include "smpart/policy/profile.hpp"

#include <string>
#include <vector>

namespace smpart::sim {

struct Launch {
  std::string kernel;
  double at_us = 0;
  double blocks = 0;     ///< logical blocks; 0: the profile's total_blocks
  bool periodic = false; ///< one of a `count` > 1 stream
};

struct SimSettings {
  double dt_us = 10;   ///< simulation step
  double ack_us = 40;  ///< knob write -> acknowledgement (a chunk + a scan)
  double noise = 0.02; ///< relative standard deviation of each step's rate
  unsigned seed = 1;
  double max_us = 1e7; ///< a run longer than this is reported, not awaited
};

struct Mix {
  std::string name;   ///< mix.name, else the file's stem
  std::string source; ///< the file
  policy::ProfileSet truth;
  policy::ProfileSet controller; ///< truth minus mix.unprofiled
  std::vector<Launch> launches;  ///< by arrival time
  SimSettings sim;
};

/// Throws policy::InputError naming the file and the JSON path.
Mix loadMix(const std::string &Path);

/// Makes the controller's profiles wrong by \p Error (0.3: 30 %) while the
/// model keeps the truth: kernel i of the controller's set (alternating
/// sign s = +1, -1, ...) has every isolated time scaled by 1 + s x Error,
/// its bandwidth figures (metrics.bw_util, shared.bw_util) by 1 - s x Error
/// (clamped to [0, 1]) and its best CTAs per SM (metrics.opt_ctas_per_sm,
/// TLP's opt) by 1 + s x Error (rounded, at least 1), so the kernels'
/// relative speeds, their memory intensity and the TLP they want all
/// mislead the policies. A negative \p Error makes each kernel wrong the
/// other way (the first too fast).
void misprofile(Mix &M, double Error);

} // namespace smpart::sim
