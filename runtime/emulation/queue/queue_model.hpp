// A CUDA-free model of streams, hardware queues and the block scheduler,
// driven by libsmpart's own relaunch, announce and preload decisions
// (smpart/detail/{relaunch,announce,preload}.hpp). See README.md.
#pragma once

#include <string>
#include <vector>

namespace smpart {
namespace queue {

struct KernelSpec {
  std::string fn;           ///< kernel function (what lazy loading loads)
  unsigned stream = 0;      ///< user stream
  unsigned blocks = 64;     ///< logical blocks
  bool captured = false;    ///< a graph replay: not announced, no relaunch
  unsigned work_before = 0; ///< user work (steps) queued before it
};

struct Config {
  unsigned connections = 8; ///< CUDA_DEVICE_MAX_CONNECTIONS
  unsigned sms = 4;
  unsigned occupancy = 2; ///< CTAs per SM of every kernel
  bool lazy = true;       ///< CUDA_MODULE_LOADING=LAZY
  unsigned max_steps = 200000;
  std::vector<std::string> registered; ///< kernels registered at static init
  /// The controller's pattern: a newcomer preempts the running kernel, which
  /// is resumed when the newcomer is done; a newcomer is also grown.
  bool preempt_for_newcomer = true;
  bool host_sync_at_end = true;
};

struct Result {
  bool ok = true;
  std::string failure; ///< first violated property, or the deadlock
  unsigned steps = 0;
  unsigned relaunches = 0;
};

Result run(const Config &config, const std::vector<KernelSpec> &launches);

} // namespace queue
} // namespace smpart
