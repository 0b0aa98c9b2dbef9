// Private to libsmpart: one launch (detail::Kernel), its control block
// (Slot, HostSlot), the per-device context and the registry that owns them,
// shared by the registry, launch and KernelHandle sources.
#pragma once

#include "smpart/runtime.hpp"

#include "smpart/detail/cuda_check.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace smpart {
namespace detail {

/// Host-mapped part of a control block: knobs (host writes, device reads),
/// notices (device writes once, host reads) and the landing area of
/// progress copies.
struct alignas(128) HostSlot {
  Knobs knobs;
  Notices notices;
  State snapshot;
};

/// One reusable control block.
struct Slot {
  HostSlot *host = nullptr;     // host address
  HostSlot *mapped = nullptr;   // the same memory, device address
  State *state = nullptr;       // device memory
  cudaEvent_t zeroed = nullptr; // state cleared (side stream)
  cudaEvent_t started = nullptr; // user stream reached the launch
  cudaEvent_t first_done = nullptr; // first instance finished
  cudaEvent_t done = nullptr;   // every logical block finished
};

constexpr unsigned kSlotsPerChunk = 64;
constexpr unsigned kRelaunchStreams = 8;

struct DeviceCtx {
  DeviceInfo info;
  cudaStream_t side = nullptr; // progress copies and state clearing
  cudaStream_t relaunch[kRelaunchStreams] = {};
  unsigned next_relaunch = 0;
  std::vector<Slot *> free_slots;
};

/// One launch. Owned by the registry until done and unreferenced.
class Kernel {
public:
  ~Kernel() {
    stop_watch = true;
    if (watcher.joinable())
      watcher.join();
    for (cudaEvent_t e : relaunch_done)
      cudaEventDestroy(e);
  }

  std::string name;
  const void *fn = nullptr;
  bool opaque = false;
  Status status;
  dim3 grid, block;
  std::size_t smem = 0;
  cudaStream_t stream = nullptr;
  Relaunch relaunch;
  unsigned long long total = 0;
  unsigned occupancy = 1;
  DeviceCtx *ctx = nullptr;
  Slot *slot = nullptr;
  cudaEvent_t opaque_done = nullptr;

  std::mutex mu; // guards the fields below
  unsigned long long launched = 0;
  bool preempted = false;
  std::vector<cudaEvent_t> relaunch_done;

  std::thread watcher;
  std::atomic<bool> stop_watch{false};

  cudaEvent_t doneEvent() const { return opaque ? opaque_done : slot->done; }

  LaunchControl control() const {
    LaunchControl c{};
    c.knobs = &slot->mapped->knobs;
    c.state = slot->state;
    c.notices = &slot->mapped->notices;
    c.grid_x = grid.x;
    c.grid_y = grid.y;
    c.grid_z = grid.z;
    c.total_blocks = total;
    return c;
  }

  Status launchInstance(unsigned long long ctas, cudaStream_t s) {
    LaunchParams p{dim3(static_cast<unsigned>(ctas)), block, smem, s,
                   control()};
    relaunch(p);
    // Peek, not get: the error stays visible to the user's own
    // cudaGetLastError() as it would after their `<<<>>>`.
    const cudaError_t err = cudaPeekAtLastError();
    if (err != cudaSuccess)
      return cudaFailure(err, ("launch of kernel " + name).c_str(), __FILE__,
                         __LINE__);
    launched += ctas;
    return Status();
  }

  unsigned long long ctasToLaunch() const {
    const volatile Knobs &k = slot->host->knobs;
    return physicalCtas(ctx->info.num_sms, occupancy, k.ctas_per_sm,
                        loadMask(k).all(), total);
  }
};

struct Runtime {
  std::mutex mu;
  bool initialised = false;
  Status init_status;
  std::map<int, DeviceCtx> devices;
  std::vector<std::shared_ptr<Kernel>> live;
};

/// The one registry of the process (see runtime.cpp).
Runtime &runtime();

Status deviceCtxLocked(Runtime &r, DeviceCtx *&out);
Status acquireSlotLocked(DeviceCtx &ctx, Slot *&out);
bool eventDone(cudaEvent_t e);
void reclaimLocked(Runtime &r);

} // namespace detail
} // namespace smpart
