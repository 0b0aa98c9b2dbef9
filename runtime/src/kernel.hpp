// Private to libsmpart: one launch (detail::Kernel), its control block
// (Slot, HostSlot), the per-device context and the registry that owns them,
// shared by the registry, launch, KernelHandle and notice sources.
#pragma once

#include "smpart/runtime.hpp"

#include "cuda_scopes.hpp"
#include "smpart/detail/cuda_check.hpp"
#include "smpart/detail/relaunch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace smpart {
namespace detail {

/// Host-mapped part of a control block: the knobs as the last knob call
/// left them (host only) and their stamped image (host writes, device
/// reads), notices (device writes, host reads), and the image of the State
/// header that the launch copies to the device before the kernel.
struct alignas(128) HostSlot {
  Knobs knobs;
  KnobImage knob_image;
  alignas(64) Notices notices;
  State image;
};

/// One reusable control block. Reused only once every instance launched
/// on it has completed (events), and each use has a new generation, which
/// a CTA checks before it touches the state.
struct Slot {
  HostSlot *host = nullptr;      // host address
  HostSlot *mapped = nullptr;    // the same memory, device address
  State *state = nullptr;        // device memory
  cudaEvent_t started = nullptr; // user stream reached the kernel
  cudaEvent_t done = nullptr;    // the kernel (first instance) completed
  unsigned generation = 0;
  /// `state` has never been written: cudaMalloc does not zero, and the
  /// first launch on the slot copies the whole State (zero slot words)
  /// instead of the header, on the launch stream (see acquireSlotLocked).
  bool fresh = true;
};

constexpr unsigned kSlotsPerChunk = 64;

/// A small pinned allocation of a device context that tells whether
/// cudaDeviceReset destroyed the context (and with it every stream, event
/// and allocation of the runtime's there): it is then no longer a
/// registered host allocation or, where the driver tells buffer ids, a
/// buffer of another id (a new allocation may take its address after the
/// reset; buffer ids are never reused). Host-side lookups, gone only on
/// such evidence (a lookup that fails says nothing); the caller's last
/// CUDA error is left as it was.
struct Sentinel {
  void *ptr = nullptr;
  unsigned long long id = 0; ///< CU_POINTER_ATTRIBUTE_BUFFER_ID; 0: unknown
  Status make();
  bool gone() const;
};

struct DeviceCtx {
  DeviceInfo info;
  /// Relaunch streams (made on demand) and, per stream, an event recorded
  /// after its last relaunch: each is lent to one relaunch at a time
  /// (detail/relaunch.hpp).
  RelaunchStreamPool relaunch_pool;
  std::vector<cudaStream_t> relaunch;
  std::vector<cudaEvent_t> relaunch_idle;
  std::vector<Slot *> free_slots;
  /// Names this context for slots given back by destroyed graphs
  /// (giveBackFromGraph): unique per process, so that a slot of a context
  /// that a reset replaced is never taken by the new one.
  unsigned long long serial = 0;
  Sentinel sentinel;
  /// Stream-ordered allocation works (cudaMallocAsync): captured launches
  /// then give each graph a State of its own (launch.cpp).
  bool memory_pools = false;
  // The SM-id probe (sm_probe.cu). Its result is read without waiting;
  // until it covers every SM, info.sm_ids stays empty.
  cudaStream_t probe_stream = nullptr; // the probe's own stream
  unsigned *probe = nullptr;      // device: SM-id bitmap of the probe kernel
  unsigned *probe_host = nullptr; // pinned copy, valid once probe_done
  cudaEvent_t probe_done = nullptr;
  bool probe_pending = false; // a probe is in flight
  unsigned probe_runs = 0;    // probes launched so far
};

/// Occupancy and attributes of one kernel function, computed once.
struct FnInfo {
  unsigned threads = 0;
  std::size_t smem = 0;
  unsigned occupancy = 1;
  /// The launch's dynamic shared memory needs the kernel's limit raised
  /// above CUDA's default (48 KB less its static shared memory).
  bool opt_in = false;
};

/// One launch. Owned by the registry until done and unreferenced.
class Kernel {
public:
  unsigned long long id = 0;
  std::string name;
  const void *fn = nullptr;
  bool opaque = false;
  bool captured = false;
  Status status;
  dim3 grid, block;
  std::size_t smem = 0;        // the user's dynamic shared memory
  std::size_t launch_smem = 0; // plus the protocol's tail
  /// launch_smem needs the function's limit raised (FnInfo::opt_in).
  bool smem_opt_in = false;
  cudaStream_t stream = nullptr;
  /// The launching thread: cudaStreamPerThread is its own stream.
  std::thread::id launcher = std::this_thread::get_id();
  Relaunch relaunch;
  unsigned long long total = 0;
  unsigned occupancy = 1;
  DeviceCtx *ctx = nullptr;
  /// ctx->sentinel at launch: tells a reset without touching ctx (which
  /// the launch that finds the reset erases).
  Sentinel sentinel;
  Slot *slot = nullptr;
  /// The State the kernel uses: the slot's, or for a captured launch the
  /// graph's own allocation (launch.cpp: captured launches).
  State *state = nullptr;
  unsigned generation = 0;
  /// Epoch of the launch's fresh knobs (nextKnobEpoch of the slot's last):
  /// later epochs were written by knob calls. Set before the kernel is
  /// watched.
  std::uint32_t launch_epoch = kLaunchKnobEpoch;
  cudaEvent_t opaque_done = nullptr;
  /// Set (once) when cudaDeviceReset destroyed the kernel's control block:
  /// nothing of it may be touched any more. Set by the next launch on the
  /// device, or by deviceGone().
  mutable std::atomic<bool> reset{false};
  mutable std::atomic<long long> reset_looked_ns{0}; ///< deviceGoneLately
  /// Set (once) when the graph a captured launch belongs to was destroyed:
  /// its control block went back to the pool and may serve another launch.
  std::atomic<bool> graph_gone{false};

  /// Whether cudaDeviceReset destroyed the kernel's context, found from
  /// its sentinel (a host-side lookup) if no launch found it yet: its
  /// events are destroyed with it, and a destroyed event must never be
  /// queried, yet a program that resets right after synchronising (as
  /// most CUDA samples end) leaves the notice thread and any handle
  /// with events to ask about.
  bool deviceGone() const {
    if (!reset && sentinel.ptr && sentinel.gone())
      reset = true;
    return reset;
  }
  /// deviceGone() at most once a millisecond, else what is known: for the
  /// polls that read host memory only (progress, knobsApplied), which a
  /// program may spin on and which must end after a reset too.
  bool deviceGoneLately() const {
    const long long now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count();
    if (reset ||
        now - reset_looked_ns.load(std::memory_order_relaxed) < 1000000)
      return reset;
    reset_looked_ns.store(now, std::memory_order_relaxed);
    return deviceGone();
  }
  /// current(), after deviceGone(): for calls about to touch the kernel's
  /// CUDA events or streams (one or two host lookups).
  Status currentForCuda() const {
    (void)deviceGone();
    return current();
  }

  /// status, or why the kernel became unusable later (a reset that a
  /// launch or a lookup found). Host-side only: knob writes and progress
  /// touch registered host memory, which a reset leaves readable.
  Status current() const {
    if (reset)
      return Status(Errc::kDeviceReset,
                    "kernel " + name +
                        ": its device was "
                        "reset (cudaDeviceReset) after launch");
    if (graph_gone)
      return Status(Errc::kInvalidArgument,
                    "kernel " + name +
                        ": the graph it was captured into was destroyed");
    return status;
  }

  std::mutex mu; // guards the fields below and serialises knob writers
  /// The first instance is in the user's stream. Before that (an observer
  /// acting while the launch is announced) relaunches must wait: the first
  /// instance starts under whatever knobs are written by then.
  bool first_enqueued = false;
  unsigned long long launched = 0;
  unsigned first_ctas = 0; ///< CTAs of the first instance (LaunchControl)
  bool preempted = false;
  std::vector<cudaEvent_t> relaunch_done;
  std::function<void()> on_last_block;
  /// on_last_block is set and not yet called: the notice thread looks for
  /// the last block (again) and keeps watching the kernel until it ran.
  std::atomic<bool> last_block_callback{false};

  // Notice thread only (announce_pending: set by the launching thread
  // before watch() hands the kernel over).
  bool announce_pending = false;
  std::uint32_t saw_applied_epoch = 0;
  bool saw_last_block = false;
  bool saw_done = false;
  /// A later launch on the same stream was enqueued behind this one
  /// before it finished (set by watch() on the launching thread, read by
  /// the observer's callbacks: KernelHandle::successorQueued()).
  std::atomic<bool> successor_queued{false};

  cudaEvent_t doneEvent() const { return opaque ? opaque_done : slot->done; }
  const volatile Notices &notices() const { return slot->host->notices; }
  bool finished() const { return !opaque && notices().finished == generation; }

  LaunchControl control(bool first) const;
  /// Enqueues `ctas` CTAs through the relaunch closure on `s`. Caller
  /// holds mu.
  Status launchInstance(unsigned long long ctas, cudaStream_t s, bool first);
  unsigned long long ctasToLaunch() const;
};

/// Kernel::deviceGone() for many kernels at once: one sentinel lookup per
/// context (`alive`: a sentinel the caller just found registered). Keyed
/// by address and buffer id: a new context's sentinel may have the address
/// of a reset one's.
class ResetLookup {
public:
  explicit ResetLookup(const Sentinel *alive = nullptr) {
    if (alive)
      seen_.push_back({*alive, false});
  }
  bool gone(const Kernel &k) {
    if (k.reset || !k.sentinel.ptr)
      return k.reset;
    auto it = std::find_if(seen_.begin(), seen_.end(), [&](const Seen &s) {
      return s.sentinel.ptr == k.sentinel.ptr && s.sentinel.id == k.sentinel.id;
    });
    if (it == seen_.end())
      it = seen_.insert(seen_.end(), {k.sentinel, k.sentinel.gone()});
    if (it->gone)
      k.reset = true;
    return it->gone;
  }

private:
  struct Seen {
    Sentinel sentinel;
    bool gone;
  };
  std::vector<Seen> seen_;
};

/// The FIFO a launch went into, for ordering decisions made on another
/// thread. A stream handle names one per context, except
/// cudaStreamPerThread, which names each host thread's own (two threads'
/// kernels on it are not ordered), and stream 0, which is the legacy
/// stream here (callerStream() resolved a per-thread default already).
struct StreamQueue {
  cudaStream_t stream = nullptr;
  const DeviceCtx *ctx = nullptr;
  std::thread::id thread; ///< cudaStreamPerThread only

  explicit StreamQueue(const Kernel &k)
      : stream(k.stream ? k.stream : cudaStreamLegacy), ctx(k.ctx) {
    if (k.stream == cudaStreamPerThread)
      thread = k.launcher;
  }
  bool operator<(const StreamQueue &o) const {
    return std::tie(stream, ctx, thread) < std::tie(o.stream, o.ctx, o.thread);
  }
  bool operator==(const StreamQueue &o) const {
    return stream == o.stream && ctx == o.ctx && thread == o.thread;
  }
};

struct Runtime {
  std::mutex mu;
  bool initialised = false;
  Status init_status;
  std::map<int, DeviceCtx> devices;
  std::vector<std::shared_ptr<Kernel>> live;
  std::size_t reclaim_cursor = 0;
  std::map<std::pair<const void *, std::size_t>, FnInfo> fns;
  std::atomic<unsigned long long> next_id{1};
};

/// The one registry of the process (see runtime.cpp).
Runtime &runtime();

Status deviceCtxLocked(Runtime &r, DeviceCtx *&out);
Status acquireSlotLocked(DeviceCtx &ctx, Slot *&out);
/// A relaunch stream no other relaunch is using, lent to kernel `owner`,
/// its event (record it after the relaunch) and its index; `s` stays null
/// when every stream the pool may have is busy. The stream stays lent
/// until ctx.relaunch_pool.returned(index), once the event is recorded.
Status relaunchStreamLocked(DeviceCtx &ctx, unsigned long long owner,
                            cudaStream_t &s, cudaEvent_t &idle,
                            std::size_t &index);
bool eventDone(cudaEvent_t e); ///< queryEvent() == cudaSuccess
/// Returns a slot of the context `serial` to the pool from a destroyed
/// graph's user object. CUDA runs those destructors on a shared internal
/// thread that must not block, and Runtime::mu is held across CUDA calls
/// that may wait for work behind that thread: this takes only a lock held
/// for a push, and the next launch moves the slot to free_slots.
void giveBackFromGraph(unsigned long long serial, Slot *slot);
/// Loads what must be loaded into `ctx` (the calling thread's current
/// context) before a transformed launch of `fn` (null: unknown): every
/// registered kernel at the context's first launch, `fn` if new there
/// (kernel_registry.cpp, detail/preload.hpp).
void preloadBeforeLaunch(const void *fn, const DeviceCtx &ctx);
/// SMs of `device` that open partitions keep for their own work, by owner
/// (a partition: partition.cpp, while a planner keeps them): a new
/// uncaptured launch's default mask leaves them out, so that a kernel that
/// starts before a planner has seen it (queued behind other work, announced
/// when its stream reaches it) does not run on them meanwhile. reserveSms
/// replaces the owner's ids.
void reserveSms(const void *owner, int device,
                const std::vector<unsigned> &ids);
void releaseSms(const void *owner);
SmMask reservedSms(int device);
/// SMPART_DISABLE=1 (any value but empty or 0), read once per process.
bool disabledByEnvironment();
/// Returns finished, unreferenced kernels' slots to their pools: at most a
/// few per call, or every kernel when `all` (the pool is empty).
/// `checked`: the context the caller just found alive (deviceCtxLocked).
void reclaimLocked(Runtime &r, bool all, const DeviceCtx *checked);
/// Launches the SM-id probe for a new device context (asynchronous, on a
/// runtime-owned non-blocking stream).
Status startSmProbe(DeviceCtx &ctx);
/// Reads the probe's result if it is done, never waiting: fills
/// ctx.info.sm_ids once the probes together saw every SM, and launches
/// another probe (bits accumulate) when the last one saw fewer. Caller
/// holds the registry lock.
void pollSmProbeLocked(DeviceCtx &ctx);

/// The notice thread: fires onLastBlockTaken callbacks and the observer's
/// onLastBlockTaken/onDone for the kernels it watches.
void watch(const std::shared_ptr<Kernel> &k);
/// Calls the observer's onLaunch on the launching thread, with no runtime
/// lock held, before the kernel is enqueued; false when there is none.
bool announceLaunch(const std::shared_ptr<Kernel> &k);
/// A launch announced to the observer failed: it departs at once.
void announceFailedLaunch(const std::shared_ptr<Kernel> &k);

} // namespace detail
} // namespace smpart
