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

} // namespace smpart::sim
