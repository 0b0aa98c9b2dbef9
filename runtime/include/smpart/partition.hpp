// smpart::Partition: a named tenant of opaque work (library calls such as
// cuBLAS or cuDNN, kernels smpart-transform refused, precompiled code),
// confined by a CUDA green context to SMs that rewritten kernels leave.
//
//   std::shared_ptr<smpart::Partition> p;
//   smpart::Partition::open("gemm", {}, p);      // never throws
//   cublasSetStream(handle, p->stream());         // a launch boundary
//   cublasSgemm(handle, ...);                     // runs on p's SMs only
//
// The share: from PartitionOptions::planner, else the process's controller
// (SMPART_POLICY), else its smpartd tenant (SMPART_SERVICE), else from the
// options (processPlanner()). It changes only at a launch boundary
// (stream() or beginLaunch()): the partition moves to the pooled green
// context of the nearest allowed size, behind an event fence (work already
// on the old stream is ordered before work on the new one; nothing is
// destroyed while it runs), and tells the plan the real SM ids it now
// uses, so that rewritten kernels are moved off them first.
//
// Without green contexts (a driver older than 12.4, a symbol missing,
// creation refused, e.g. under MPS) the process says so in one line on
// stderr, stream() is an ordinary stream (opaque work runs on every SM)
// and everything else works. runtime/README.md, "Partitions".
#pragma once

#include "smpart/runtime.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace smpart {

/// Where a partition's share comes from: the plan that also partitions
/// rewritten kernels. An adapter of smpart::Controller is what the process's
/// controller gives (plannerFor()); tests and services may supply their own.
class OpaquePlanner {
public:
  virtual ~OpaquePlanner() = default;
  /// Declares a tenant: at least `min_sms`, sizes in steps of `granularity`.
  virtual void add(const std::string &name, unsigned min_sms,
                   unsigned granularity, double weight) = 0;
  virtual void remove(const std::string &name) = 0;
  /// The SMs the plan gives the tenant now; 0: not planned (yet).
  virtual unsigned target(const std::string &name) = 0;
  /// The tenant now uses exactly these real SM ids; true once every
  /// rewritten kernel acknowledged leaving them. Idempotent: asked at every
  /// launch boundary, polled only under PartitionOptions::hold_timeout_ms.
  virtual bool hold(const std::string &name,
                    const std::vector<unsigned> &sm_ids) = 0;
};

struct PartitionOptions {
  /// The share without a plan: SMs, or (sms == 0) a fraction of the GPU's
  /// SMs; both 0: half of them. Rounded to the nearest size the device
  /// allows.
  unsigned sms = 0;
  double fraction = 0;
  /// What the plan must give at least, and the tenant's weight in it.
  unsigned min_sms = 1;
  double weight = 1.0;
  /// The plan to follow; null: processPlanner() (the process's controller,
  /// else its smpartd tenant), if there is one. `follow_plan = false`
  /// ignores any plan.
  std::shared_ptr<OpaquePlanner> planner;
  bool follow_plan = true;
  /// How long a launch boundary blocks the calling thread until rewritten
  /// kernels acknowledged leaving the partition's SMs. 0 (the default):
  /// not at all. The boundary still asks for the hold (the plan moves them
  /// off, new launches keep off) and the work is enqueued at once; the
  /// GPU's block scheduler places it on the SMs they already left while
  /// the others finish their current chunk. A wait would make every
  /// library call synchronous with the rewritten kernels' progress and
  /// stop the thread from queueing anything else meanwhile. Above 0: strict
  /// exclusivity, at that cost; past the deadline the work goes ahead
  /// (one warning per partition).
  unsigned hold_timeout_ms = 0;
  /// How long close() waits for the work queued on the partition before
  /// its SMs go back to rewritten kernels.
  unsigned drain_timeout_ms = 200;
};

/// A partition as it stands (PartitionOptions decide the rest).
struct PartitionState {
  bool confined = false; ///< a green context holds its work
  unsigned sms = 0;      ///< SMs of the green context in use (0: unconfined)
  /// Real %smid values of those SMs, ascending; empty until probed.
  std::vector<unsigned> sm_ids;
  bool sm_ids_known = false;
  unsigned long long boundaries = 0; ///< launch boundaries passed
  unsigned long long switches = 0;   ///< green-context changes made
  bool held = false; ///< the plan confirmed rewritten kernels left its SMs
  /// Time the boundaries blocked their callers waiting for holds
  /// (hold_timeout_ms > 0), and how many of those waits hit the deadline.
  double hold_wait_ms = 0;
  unsigned long long hold_timeouts = 0;
};

class Partition {
public:
  /// Opens the partition `name`, or returns the one already open under that
  /// name (its options unchanged). `out` is set unless no GPU is usable.
  /// Never throws; an unconfined partition is not an error.
  static Status open(const std::string &name, const PartitionOptions &options,
                     std::shared_ptr<Partition> &out);
  /// The partition open under `name`, or null.
  static std::shared_ptr<Partition> find(const std::string &name);
  /// Leaves the plan and frees its SMs, once the work queued on it drained
  /// (waited for at most drain_timeout_ms); handles still work, unconfined.
  static void close(const std::string &name);

  /// A launch boundary, then the stream the next work goes on. Call it for
  /// each piece of work (each library call or batch): a share the plan
  /// changed is applied here and only here. Enqueue the work before the
  /// next boundary: a stream kept across another thread's boundary may
  /// belong to the previous green context, whose SMs are held only for
  /// the work enqueued before the switch. launch() takes the stream and
  /// enqueues under the partition's lock; smpart::confined enqueues right
  /// after its boundary, so only another thread's boundary in between can
  /// put it on the previous SMs. One stream for every caller: work of
  /// several threads on it runs in one order, and a capture forked into it
  /// takes in everything queued on it until the capture ends (and keeps
  /// the partition's share as it was until then); streamFor() gives each
  /// caller stream its own.
  cudaStream_t stream();
  /// A launch boundary, then the partition's stream for work forked from
  /// `caller` (a lane of the green context in use, one per caller stream;
  /// cudaStreamPerThread is a different caller on each thread). Work
  /// forked from two streams never shares a stream: one's launch never
  /// waits behind the other's, and a capture on one thread, which takes
  /// in every stream forked into it until it ends, never takes in another
  /// thread's launch. The caller orders the lane with `caller` (an event
  /// each way), as launch() and smpart::confined do, before its next
  /// boundary. The lane stays `caller`'s while it has work or is in a
  /// capture; past 32 callers, a lane idle, unleased and outside
  /// any capture may serve another one. Unconfined: `caller`.
  cudaStream_t streamFor(cudaStream_t caller);
  /// A launch boundary without taking the stream (e.g. before a call that
  /// finds it through a handle set earlier: then call stream() again).
  Status beginLaunch();
  /// The current stream, with no boundary.
  cudaStream_t currentStream() const;
  /// Without a plan: the share from the next boundary on.
  Status request(unsigned sms);
  /// A launch boundary, then an unchanged kernel on the partition's lane
  /// for `stream` (streamFor), ordered with `stream` exactly like a launch
  /// on it (an event on `stream` that the lane waits for, the kernel, an
  /// event that `stream` waits for); tracked like smpart::launchOpaque.
  /// Legal under stream capture, which takes in only that lane. Unconfined:
  /// launchOpaque on `stream`.
  KernelHandle launch(const KernelInfo &kernel, dim3 grid, dim3 block,
                      std::size_t smem, cudaStream_t stream,
                      OpaqueLaunch launcher);

  const std::string &name() const;
  bool confined() const;
  PartitionState state() const;
  /// Why the partition is unconfined (empty when it is confined).
  std::string reason() const;

  struct Impl;
  explicit Partition(std::unique_ptr<Impl> impl);
  ~Partition();
  Partition(const Partition &) = delete;
  Partition &operator=(const Partition &) = delete;

private:
  friend class ConfinedStream;
  /// streamFor() for smpart::confined, which forks, launches and joins
  /// after it returns: until returnLane(lease), the lane serves no other
  /// caller stream and is not recorded on by a switch.
  cudaStream_t leaseLane(cudaStream_t caller, void *&lease);
  static void returnLane(void *lease);

  std::unique_ptr<Impl> impl_;
};

class Controller;
/// The plan of `controller` (Controller::addOpaque and its kin) as an
/// OpaquePlanner; null when the controller has no opaque planning.
std::shared_ptr<OpaquePlanner>
plannerFor(std::shared_ptr<Controller> controller);

namespace service {
class Client;
}
/// The plan of smpartd for the tenant `client` (declareOpaque and its kin;
/// answers come from what the service last sent, never a round trip) as
/// an OpaquePlanner; null without a client. While the service does not
/// answer, hold() returns true (no plan is in force to wait for: a
/// boundary never stalls on a service that is down); the hold is sent
/// when it answers.
std::shared_ptr<OpaquePlanner>
plannerFor(std::shared_ptr<service::Client> client);

/// The plan a partition follows when its options name none: the
/// process's controller (SMPART_POLICY) if there is one, else its smpartd
/// tenant (SMPART_SERVICE, processServiceClient()), else null.
std::shared_ptr<OpaquePlanner> processPlanner();

} // namespace smpart
