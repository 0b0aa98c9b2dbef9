// CUDA green contexts for smpart::Partition: the driver entry points,
// loaded at run time, and the process's pool of green contexts.
//
// The driver API of green contexts (CUDA 12.4+) is resolved through
// cudaGetDriverEntryPointByVersion into a DriverTable, never linked: libsmpart
// links and runs with any driver, and a driver without them (or a setup
// where creation fails, e.g. under MPS) only makes partitions unconfined.
//
// SM layout: the device's SM resource is split once into groups of the
// smallest size the device allows (minSmPartitionSize rounded up to
// smCoscheduledAlignment, both queried); a partition of n groups is a green
// context made of n of these groups (one descriptor may combine the outputs
// of one split). Partitions of different tenants therefore own disjoint
// groups, and the real SM ids of a green context are the union of its
// groups' ids, which a probe kernel (%smid, sm_probe.cu) on one green
// context per group records once. Green contexts are pooled by their set of
// groups and never destroyed while the process runs: a stream that still has
// work keeps its context, and a later partition of the same groups reuses it.
#pragma once

#include "smpart/detail/status.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace smpart {
namespace detail {

/// One run of the SM-id probe kernel (sm_probe.cu): `ctas` CTAs of 1024
/// threads OR their %smid into `bitmap` (kMaskWords words).
cudaError_t launchSmIdProbe(unsigned *bitmap, unsigned ctas,
                            cudaStream_t stream);

namespace green {

/// Resolves a driver symbol as of a CUDA version (12040 = 12.4): the entry
/// point, or null when the driver lacks it.
using Resolver = std::function<void *(const char *symbol, unsigned version)>;

/// cudaGetDriverEntryPointByVersion.
Resolver runtimeResolver();

/// The driver entry points of green contexts.
struct DriverTable {
  PFN_cuDeviceGet_v2000 deviceGet = nullptr;
  PFN_cuDeviceGetDevResource_v12040 getDevResource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 splitByCount = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generateDesc = nullptr;
  PFN_cuGreenCtxCreate_v12040 create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 destroy = nullptr;
  /// Streams: cuGreenCtxStreamCreate (12.5), or on a 12.4 driver a stream
  /// created while the green context's CUcontext is current.
  /// (Spelled out: a 12.4 toolkit has no PFN_cuGreenCtxStreamCreate.)
  CUresult(CUDAAPI *streamCreate)(CUstream *, CUgreenCtx, unsigned,
                                  int) = nullptr;
  PFN_cuCtxFromGreenCtx_v12040 fromGreenCtx = nullptr;
  PFN_cuCtxPushCurrent_v4000 pushCurrent = nullptr;
  PFN_cuCtxPopCurrent_v4000 popCurrent = nullptr;
  PFN_cuStreamCreate_v2000 streamCreateCurrent = nullptr;
  /// The first symbol the driver lacks; empty when the table is usable.
  std::string missing;
  bool usable() const { return missing.empty(); }
};

/// Resolves every entry point through `resolve`.
DriverTable loadDriverTable(const Resolver &resolve);

/// Smallest green context the device allows, which is also the step
/// between sizes: minSmPartitionSize rounded up to smCoscheduledAlignment
/// (each at least 1).
unsigned groupSize(unsigned min_partition, unsigned alignment);
/// Sizes a partition may have: 1..`groups` groups of `group_size` SMs.
std::vector<unsigned> allowedSizes(unsigned group_size, unsigned groups);
/// The allowed size nearest to `want` (ties: the larger one; below the
/// smallest: the smallest). 0 when `sizes` is empty.
unsigned nearestAllowed(const std::vector<unsigned> &sizes, unsigned want);

/// Runs of the SM-id probe on one green context's stream; the bits of
/// every run add up until as many ids as the context has SMs were seen.
struct Probe {
  unsigned *device = nullptr; // kMaskWords words
  unsigned *host = nullptr;   // pinned copy
  cudaEvent_t done = nullptr;
  bool pending = false;
  unsigned runs = 0;
  std::vector<unsigned> ids;
  bool known = false;
};

/// A stream of a green context kept for the work of one caller's stream
/// (Pool::laneFor). Never destroyed, like its context.
struct Lane {
  cudaStream_t caller = nullptr;
  std::thread::id thread; ///< whose cudaStreamPerThread; else none
  cudaStream_t stream = nullptr;
  /// Launches between laneFor(lease) and returnLane: the lane is being
  /// forked into, launched on or joined; it serves no other caller then.
  unsigned leases = 0;
  /// Handed out by Partition::streamFor(), whose caller forks into it
  /// whenever it likes: it is that caller's for good, never rebound.
  bool pinned = false;
  /// Recorded on the lane when its partition leaves the context; a lane
  /// leased or capturing then is recorded once it is neither.
  cudaEvent_t retired = nullptr;
  bool retire_pending = false;
  unsigned long long last_use = 0;
};

/// One pooled green context: a set of groups, its streams and its SM ids.
struct Entry {
  std::uint64_t groups = 0; ///< bit i: group i
  CUgreenCtx ctx = nullptr;
  cudaStream_t stream = nullptr;            ///< Partition::stream()'s
  std::vector<std::unique_ptr<Lane>> lanes; // stable addresses: leases
  unsigned long long lane_uses = 0;
  unsigned sms = 0;             ///< SMs the driver provisioned
  std::vector<unsigned> sm_ids; ///< real %smid values, ascending
  bool sm_ids_known = false;    ///< every group's probe answered
  /// A context of several groups is probed itself too: its ids are the
  /// union of its groups' and of what its own probe saw, so that a driver
  /// placing a combined context differently still never shares an SM.
  Probe probe;
};

/// The process's green contexts on the current device.
class Pool {
public:
  static Pool &instance();

  /// Sets up on first use (entry points, SM resource, split, one probe per
  /// group, waited for at most ~2 s). False when green contexts cannot be
  /// used; `why` then says why, and the first such failure of the process
  /// printed one line on stderr.
  bool ready(std::string &why);

  unsigned groupSize() const { return group_size_; }
  /// The CUDA device the pool was set up on.
  int device() const { return ordinal_; }
  unsigned groups() const { return static_cast<unsigned>(group_res_.size()); }
  unsigned smCount() const { return sm_count_; }

  /// Moves an owner from `have` to `want` groups (at least 1): drops its
  /// highest groups, or adds the lowest free ones (fewer when too few are
  /// free). Returns the new set; the groups it left are free again.
  std::uint64_t resize(std::uint64_t have, unsigned want);
  /// Frees the groups of an owner that goes away.
  void release(std::uint64_t groups);

  /// resize() and the green context of the new set, made on first use, in
  /// one step: when that context cannot be made, `have` keeps its groups
  /// and the error is returned.
  Status switchTo(std::uint64_t &have, unsigned want, Entry *&out);
  /// Undoes a switchTo() from `back` to `now` whose fence failed.
  void restore(std::uint64_t now, std::uint64_t back);
  /// The green context of exactly `groups`, made on first use.
  Status entryFor(std::uint64_t groups, Entry *&out);
  /// The real SM ids of `e`, once every group's probe answered (polled
  /// here, without waiting); false until then.
  bool smIds(Entry &e, std::vector<unsigned> &out);

  /// Lanes a context keeps for callers that come and go: past them, the
  /// least recently used lane that is idle, unleased and outside any
  /// capture serves a new caller; with none such, another lane is made.
  /// A lane is never shared by two callers at once. A context handed out
  /// again (switchTo) starts with no lane marked retired.
  static constexpr std::size_t kMaxLanes = 32;
  /// The lane of `e` kept for work forked from `caller`, made on first use.
  /// Confined work of two callers' streams never shares a stream: one's
  /// launch never waits behind the other's, and one thread's stream
  /// capture, which takes in every stream forked into it until it ends,
  /// never takes in another caller's launch. cudaStreamPerThread is a
  /// different caller on each thread. `lease`: the caller forks, launches
  /// and joins after this returns, and calls returnLane(out) once joined;
  /// without a lease the lane is pinned to `caller`.
  Status laneFor(Entry &e, cudaStream_t caller, bool lease, Lane *&out);
  void returnLane(Lane &lane);
  /// Marks every lane of `e` retired: its partition leaves `e`.
  void retireLanes(Entry &e);
  /// Whether work queued on a lane of `e` before retireLanes() may still
  /// run (a lane still leased or capturing counts as running).
  bool lanesRetiring(Entry &e);
  /// Whether work queued on any stream of `e` may still run.
  bool busy(Entry &e);

  /// Tests: forget everything (nothing is destroyed: the fake driver owns
  /// nothing) and resolve entry points through `resolve` from now on.
  static void resetForTesting(Resolver resolve);

private:
  bool setUpLocked(std::string &why);
  std::uint64_t resizeLocked(std::uint64_t have, unsigned want);
  Status entryForLocked(std::uint64_t groups, Entry *&out);
  Status makeEntryLocked(std::uint64_t groups, Entry &e);
  Status makeStreamLocked(CUgreenCtx ctx, cudaStream_t &out);
  void retireReadyLocked(Entry &e);
  Status launchProbeLocked(Probe &p, cudaStream_t s, unsigned sms);
  /// Polls `p`; a run that saw fewer than `sms` ids is run again.
  void pollProbeLocked(Probe &p, cudaStream_t s, unsigned sms);
  void pollProbesLocked();
  void refreshIdsLocked(Entry &e);

  std::mutex mu_;
  Resolver resolve_;
  bool tried_ = false;
  bool ok_ = false;
  std::string why_;
  DriverTable drv_;
  CUdevice dev_ = 0;
  int ordinal_ = 0;
  unsigned sm_count_ = 0;
  unsigned group_size_ = 0;
  std::vector<CUdevResource> group_res_;
  std::vector<Probe> probes_;
  std::uint64_t free_ = 0;
  std::map<std::uint64_t, std::unique_ptr<Entry>> entries_;
};

} // namespace green
} // namespace detail
} // namespace smpart
