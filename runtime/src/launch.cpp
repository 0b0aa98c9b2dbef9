// libsmpart host runtime: launch of transformed and opaque kernels, and the
// thread's last launch error. See smpart/runtime.hpp for the contract.
#include "kernel.hpp"

#include "smpart/controller.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace smpart {
namespace detail {

/// SMPART_DISABLE=1 (any value but empty or 0), read once per process.
bool disabledByEnvironment() {
  static const bool disabled = [] {
    const char *v = std::getenv("SMPART_DISABLE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return disabled;
}

namespace {

thread_local Status t_last_error;

KernelHandle failed(std::shared_ptr<Kernel> k, Status st) {
  k->status = st;
  t_last_error = std::move(st);
  return KernelHandle(std::move(k));
}

/// The launch the rewritten `<<<>>>` was, unchanged: the closure launches
/// the original kernel (KernelInfo::has_original), so CUDA reports its
/// errors to cudaGetLastError() as it would have without smpart.
void launchOriginal(const Relaunch &relaunch, dim3 grid, dim3 block,
                    std::size_t smem, cudaStream_t stream) {
  LaunchParams p{grid, block, smem, stream, LaunchControl{}, true};
  relaunch(p);
}

/// SMPART_DISABLE=1 cannot apply to a kernel rewritten without its
/// original (smpart-transform --keep-original): said once per process.
void reportNoOriginal(const KernelInfo &kernel) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true))
    return;
  std::fprintf(stderr,
               "smpart: SMPART_DISABLE is set, but kernel '%s' was rewritten "
               "without its original definition (smpart-transform "
               "--keep-original); it runs transformed (said once)\n",
               kernel.name ? kernel.name : "(unnamed)");
}

/// The first failed launch of the process is one line on stderr: a
/// rewritten launch drops its handle, and without the line a program with
/// no usable GPU would only see CUDA's own error, or none.
void reportFirstFailure(const Kernel &k, const Status &st, bool original) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true))
    return;
  std::fprintf(stderr,
               "smpart: kernel '%s': %s; %s (later failures are "
               "not printed)\n",
               k.name.c_str(), st.message().c_str(),
               original ? "launched the original kernel instead"
                        : "not launched");
}

/// A transformed launch that failed: the status for the caller, the line
/// on stderr, and the original launch if nothing was enqueued and the
/// closure can make it.
KernelHandle failedTransformed(std::shared_ptr<Kernel> k, Status st,
                               bool has_original, bool enqueued) {
  const bool original = has_original && !enqueued;
  reportFirstFailure(*k, st, original);
  if (original)
    launchOriginal(k->relaunch, k->grid, k->block, k->smem, k->stream);
  return failed(std::move(k), std::move(st));
}

Status validate(const KernelInfo &kernel, dim3 grid, dim3 block,
                unsigned long long &total) {
  total = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  if (total == 0)
    return Status(Errc::kInvalidArgument,
                  "launch with an empty grid (" + std::to_string(grid.x) +
                      ", " + std::to_string(grid.y) + ", " +
                      std::to_string(grid.z) + ")",
                  static_cast<int>(cudaErrorInvalidConfiguration));
  const unsigned long long threads =
      static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (kernel.max_threads_per_block != 0 &&
      threads > kernel.max_threads_per_block)
    return Status(Errc::kInvalidArgument,
                  "launch of " + std::to_string(threads) +
                      " threads per block; the kernel's __launch_bounds__ "
                      "allows at most " +
                      std::to_string(kernel.max_threads_per_block),
                  // What CUDA 13 returns for the original on an H200.
                  static_cast<int>(cudaErrorInvalidValue));
  return Status();
}

/// Partitions' reserved SMs: owner -> (device, ids).
struct Reservations {
  std::mutex mu;
  std::map<const void *, std::pair<int, SmMask>> by_owner;
};
/// Never destroyed, like the registry: the notice thread may launch (a
/// callback's launch) while static objects are destroyed at exit.
Reservations &reservations() {
  static Reservations *r = new Reservations;
  return *r;
}

/// A fresh launch's mask: every SM but those partitions reserve, unless
/// that leaves none of the device's SMs (unknown ids: all of them).
SmMask defaultMask(const DeviceInfo &info) {
  SmMask all;
  all.set();
  const SmMask free = all & ~reservedSms(info.device);
  for (unsigned id : info.sm_ids)
    if (id < kMaxSms && free.test(id))
      return free;
  return all;
}

/// The user's dynamic shared memory, padded to 16 bytes, plus the
/// protocol's tail (device.cuh: Tail), which lives at its end.
std::size_t launchSmem(std::size_t user) {
  return ((user + 15) & ~std::size_t{15}) + kTailBytes;
}

/// Raises `fn`'s dynamic shared memory limit to `bytes` where it is lower,
/// never lowering it (another thread's launch may need more).
Status fitSmemLimit(const void *fn, std::size_t bytes) {
  cudaFuncAttributes attr{};
  SMPART_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  if (static_cast<std::size_t>(attr.maxDynamicSharedSizeBytes) < bytes)
    SMPART_CUDA_CHECK(
        cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)));
  return Status();
}

/// Occupancy of `fn` at this block size and shared memory, computed once
/// per (fn, size). When the tail pushes the dynamic shared memory over
/// CUDA's default limit (a kernel that opted into more than 48 KB), the
/// limit is fitted at every launch and relaunch, not once: code that sets
/// the limit to its own size before each launch (the rewrite points its
/// cudaFuncSetAttribute at the rewritten kernel) would otherwise take the
/// tail's bytes back from the second launch on.
Status fnInfoLocked(Runtime &r, Kernel &k, unsigned threads) {
  if (!k.fn) {
    k.occupancy = occupancyFromThreads(threads, k.ctx->info.max_threads_per_sm,
                                       k.ctx->info.max_blocks_per_sm);
    return Status();
  }
  const auto key =
      std::make_pair(k.fn, k.launch_smem ^ (std::size_t{threads} << 40));
  auto it = r.fns.find(key);
  if (it != r.fns.end()) {
    k.occupancy = it->second.occupancy;
    k.smem_opt_in = it->second.opt_in;
    return it->second.opt_in ? fitSmemLimit(k.fn, k.launch_smem) : Status();
  }
  cudaFuncAttributes attr{};
  SMPART_CUDA_CHECK(cudaFuncGetAttributes(&attr, k.fn));
  constexpr std::size_t kDefaultSmemLimit = 48 * 1024;
  const bool opt_in = k.launch_smem + attr.sharedSizeBytes > kDefaultSmemLimit;
  if (static_cast<std::size_t>(attr.maxDynamicSharedSizeBytes) < k.launch_smem)
    SMPART_RETURN_IF_ERROR(fitSmemLimit(k.fn, k.launch_smem));
  int occ = 0;
  SMPART_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &occ, k.fn, static_cast<int>(threads), k.launch_smem));
  // 0: the configuration cannot run at all; the launch reports why.
  FnInfo info;
  info.threads = threads;
  info.smem = k.launch_smem;
  info.occupancy = occ > 0 ? static_cast<unsigned>(occ) : 1u;
  info.opt_in = opt_in;
  r.fns.emplace(key, info);
  k.occupancy = info.occupancy;
  k.smem_opt_in = opt_in;
  return Status();
}

/// SMPART_POLICY, SMPART_PROFILE, SMPART_TRACE: read at the first launch.
/// An invalid setting is one line on stderr and the application runs on
/// without the controller.
void configureFromEnvironmentOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The first launch may be a captured one: the set-up (device query, SM
    // probe) must not invalidate the capture.
    CaptureModeRelaxed relaxed;
    // An unknown policy is named before anything needs the GPU, so that it
    // is reported also where there is none (the CUDA-free check stops at
    // the name, with the valid ones).
    const char *policy = std::getenv("SMPART_POLICY");
    const std::string message =
        policy && *policy && !controller::isPolicyName(policy)
            ? controller::configureFromEnvironment(
                  [](const char *name) { return std::getenv(name); }, {})
                  .error
            : controller::initFromEnvironment();
    if (!message.empty())
      std::fprintf(stderr, "%s\n", message.c_str());
  });
}

// Captured launches.
//
// A launch captured into a graph is replayed by every launch of every
// executable graph instantiated from it, with the kernel parameters
// (LaunchControl: the addresses of Knobs, State and Notices) fixed at
// capture. Two requirements follow:
//
// * Each replay starts from a clean control block. The captured sequence
//   therefore holds its own resets, as graph nodes on the capturing
//   stream: the whole State image (header and zero slot words) is copied
//   in, and the Notices are zeroed by a copy from those zero slot words,
//   before the kernel node. Knobs are not reset: they are the host's, and
//   apply to every replay.
// * Two replays must never share a live State. CUDA orders the launches
//   of one cudaGraphExec_t (a launch waits for the previous one), but two
//   execs of one graph may run at the same time, and the runtime cannot
//   see instantiation. The State is therefore a graph allocation
//   (cudaMallocAsync/cudaFreeAsync captured around the kernel: a memory
//   allocation node and a free node), which is CUDA's own answer to
//   resources whose address is baked into a graph: such a graph can have
//   at most one executable graph at a time (a second cudaGraphInstantiate
//   fails until the first exec is destroyed), cannot be cloned, and each
//   replay's allocation is freed by the replay itself. Nothing is
//   serialised behind the user's back, so nothing can deadlock; a program
//   that wants the same work twice at once captures it twice (each capture
//   has its own control block). A device-side claim from a pool of blocks
//   was not chosen: the kernel's parameters cannot change per replay, so
//   it would need an indirection in the device protocol on every CTA.
//   Devices without stream-ordered allocation (cudaDevAttrMemoryPools-
//   Supported == 0) fall back to the slot's own State; there concurrent
//   execs of one graph would share it (runtime/README.md says so).
//
// The host part of the control block (Knobs, Notices, the State image)
// lives as long as the graph: the graph owns a user object whose
// destructor returns the slot to the pool.
struct CapturedSlot {
  unsigned long long ctx_serial; // the context may be gone (a reset) by then
  Slot *slot;
  /// The capture's handles must not write knobs into the slot once another
  /// launch may use it.
  std::weak_ptr<Kernel> kernel;
};

void releaseCapturedSlot(void *p) {
  auto *c = static_cast<CapturedSlot *>(p);
  if (std::shared_ptr<Kernel> k = c->kernel.lock())
    k->graph_gone = true;
  giveBackFromGraph(c->ctx_serial, c->slot);
  delete c;
}

Status retainForGraph(const std::shared_ptr<Kernel> &kp) {
  Kernel &k = *kp;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  SMPART_CUDA_CHECK(cudaStreamGetCaptureInfo(k.stream, &cs, nullptr, &graph));
  auto *owner = new CapturedSlot{k.ctx->serial, k.slot, kp};
  cudaUserObject_t obj = nullptr;
  const cudaError_t err = cudaUserObjectCreate(
      &obj, owner, &releaseCapturedSlot, 1, cudaUserObjectNoDestructorSync);
  if (err != cudaSuccess) {
    delete owner;
    SMPART_CUDA_CHECK(err);
  }
  // On failure the reference stays ours and is never released: the slot
  // then stays with this launch, which returns it.
  SMPART_CUDA_CHECK(
      cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove));
  return Status();
}

static_assert(sizeof(Notices) <= sizeof(State::sm_slots),
              "captured launches zero the Notices from the zero slot words");

/// The captured reset nodes, then the kernel, then the free node of the
/// graph allocation (see above). `enqueued`: the kernel node may exist.
Status captureKernel(Kernel &k, unsigned long long ctas, bool &enqueued) {
  Slot &s = *k.slot;
  bool graph_state = false;
  if (k.ctx->memory_pools) {
    SMPART_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&k.state),
                                      sizeof(State), k.stream));
    graph_state = true;
  } else {
    k.state = s.state;
  }
  Status st = [&]() -> Status {
    SMPART_CUDA_CHECK(cudaMemcpyAsync(k.state, &s.host->image, sizeof(State),
                                      cudaMemcpyHostToDevice, k.stream));
    SMPART_CUDA_CHECK(cudaMemcpyAsync(const_cast<Notices *>(&s.host->notices),
                                      &k.state->sm_slots[0], sizeof(Notices),
                                      cudaMemcpyDeviceToHost, k.stream));
    std::lock_guard<std::mutex> lock(k.mu);
    enqueued = true;
    k.first_enqueued = true;
    return k.launchInstance(ctas, k.stream, true);
  }();
  // Freed even after a failure, so that the graph stays well formed: an
  // allocation the graph does not free would fail its next launch.
  if (graph_state) {
    const cudaError_t err = cudaFreeAsync(k.state, k.stream);
    if (st.ok())
      SMPART_CUDA_CHECK(err);
  }
  return st;
}

} // namespace

LaunchControl Kernel::control(bool first) const {
  LaunchControl c{};
  c.knobs = &slot->mapped->knob_image;
  c.state = state;
  c.notices = &slot->mapped->notices;
  setLogicalGrid(c, grid.x, grid.y, grid.z);
  c.generation = generation;
  c.first_instance = first ? 1u : 0u;
  c.first_ctas = first_ctas;
  c.min_epoch = slot->host->knobs.epoch; // callers hold mu, as knob writers
  return c;
}

Status Kernel::launchInstance(unsigned long long ctas, cudaStream_t s,
                              bool first) {
  // The program may have set the limit to its own size since (for its
  // next launch of this kernel).
  if (!first && smem_opt_in && fn)
    SMPART_RETURN_IF_ERROR(fitSmemLimit(fn, launch_smem));
  LaunchParams p{dim3(static_cast<unsigned>(ctas)), block, launch_smem, s,
                 control(first)};
  // The closure launches with <<<>>>, whose error lands in CUDA's
  // per-thread last error. Peek before and after: an error that was
  // already pending is not taken for this launch's (if this launch failed
  // the same way, wait() finds the kernel never ran). The first instance's
  // error stays for the user's own cudaGetLastError(), as its <<<>>>
  // would have left it; a relaunch's is cleared (it runs on a
  // controller's thread, whose next relaunch must see its own).
  const cudaError_t before = cudaPeekAtLastError();
  relaunch(p);
  const cudaError_t after = cudaPeekAtLastError();
  if (after != cudaSuccess && after != before) {
    if (!first && before == cudaSuccess)
      cudaGetLastError();
    return cudaFailure(after, ("launch of kernel " + name).c_str(), __FILE__,
                       __LINE__);
  }
  launched += ctas;
  return Status();
}

unsigned long long Kernel::ctasToLaunch() const {
  const volatile Knobs &k = slot->host->knobs;
  return physicalCtas(ctx->info.num_sms, occupancy, k.ctas_per_sm,
                      loadMask(k).all(), total);
}

/// The steps of a transformed launch; any failure leaves a status. Once
/// the kernel may have been enqueued, the slot stays with the kernel until
/// its events say it completed (reclaimLocked), whatever the status says.
static Status launchTransformedSteps(const std::shared_ptr<Kernel> &kp,
                                     bool &enqueued, bool &announced) {
  Kernel &k = *kp;
  Runtime &r = runtime();
  const unsigned threads = k.block.x * k.block.y * k.block.z;
  k.launch_smem = launchSmem(k.smem);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  SMPART_CUDA_CHECK(cudaStreamGetCaptureInfo(k.stream, &cs));
  if (cs == cudaStreamCaptureStatusInvalidated)
    return cudaFailure(cudaErrorStreamCaptureInvalidated,
                       ("launch of kernel " + k.name +
                        " into a capture that was invalidated before")
                           .c_str(),
                       __FILE__, __LINE__);
  k.captured = cs == cudaStreamCaptureStatusActive;
  // Set-up calls (first-use allocations, event queries of finished
  // kernels) must not invalidate a capture in progress on the caller's
  // stream: relaxed capture mode for this thread meanwhile. None of them
  // uses a stream.
  {
    CaptureModeRelaxed relaxed;
    std::lock_guard<std::mutex> lock(r.mu);
    SMPART_RETURN_IF_ERROR(deviceCtxLocked(r, k.ctx));
    k.sentinel = k.ctx->sentinel;
  }
  // Before anything of this launch is enqueued: a context's first launch
  // loads every registered kernel, any launch its own kernel if it is not
  // loaded yet (detail/preload.hpp). Not under the runtime's lock: a load
  // may wait for every running kernel, a preempted one among them runs
  // until the controller resumes it, and a resume takes that lock. The
  // attribute queries below would otherwise load the kernel under it.
  preloadBeforeLaunch(k.fn, *k.ctx);
  {
    CaptureModeRelaxed relaxed;
    std::lock_guard<std::mutex> lock(r.mu);
    pollSmProbeLocked(*k.ctx);
    reclaimLocked(r, false, k.ctx);
    if (k.ctx->free_slots.empty())
      reclaimLocked(r, true, k.ctx);
    SMPART_RETURN_IF_ERROR(acquireSlotLocked(*k.ctx, k.slot));
    k.generation = ++k.slot->generation;
    if (k.generation == 0) // 0 means "never finished" in Notices
      k.generation = ++k.slot->generation;
    SMPART_RETURN_IF_ERROR(fnInfoLocked(r, k, threads));
  }
  Slot &s = *k.slot;
  HostSlot &h = *s.host;
  k.launch_epoch = nextKnobEpoch(h.knobs.epoch);
  initKnobs(h.knobs, k.occupancy, k.launch_epoch);
  // A captured launch keeps every SM: its knobs serve every replay, also
  // after the partition is gone, and no planner hears of it.
  if (!k.captured)
    storeMask(h.knobs, defaultMask(k.ctx->info));
  storeKnobImage(h.knob_image, h.knobs);
  std::memset(const_cast<Notices *>(&h.notices), 0, sizeof(Notices));
  // The observer (a controller) sets this kernel's knobs now, before the
  // state image takes them: its first CTAs already run where it decided.
  if (!k.captured)
    announced = announceLaunch(kp);
  const unsigned long long ctas = k.ctasToLaunch();
  k.first_ctas = static_cast<unsigned>(ctas);
  // A zero State: what a slot's first launch and a captured launch copy
  // (the first CTA initialises the rest: the launch handshake).
  std::memset(static_cast<void *>(&h.image), 0, kStateInitBytes);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (k.captured) {
    SMPART_RETURN_IF_ERROR(retainForGraph(kp));
    enqueued = true; // the graph owns the slot now
    return captureKernel(k, ctas, enqueued);
  }
  // Nothing goes in the stream before the kernel: its first CTA
  // initialises the State (the launch handshake, device.cuh), which an
  // earlier launch on this slot left with an older generation and zero
  // slot words. Only a slot's first launch copies a zero State (the pool
  // never zeroes device memory itself: see acquireSlotLocked).
  k.state = s.state;
  if (s.fresh)
    SMPART_CUDA_CHECK(cudaMemcpyAsync(s.state, &h.image, sizeof(State),
                                      cudaMemcpyHostToDevice, k.stream));
  s.fresh = false;
  // Relaunches wait for the user's earlier work.
  SMPART_CUDA_CHECK(cudaEventRecord(s.started, k.stream));
  {
    std::lock_guard<std::mutex> lock(k.mu);
    enqueued = true;
    k.first_enqueued = true;
    SMPART_RETURN_IF_ERROR(k.launchInstance(ctas, k.stream, true));
  }
  SMPART_CUDA_CHECK(cudaEventRecord(s.done, k.stream));
  return Status();
}

/// A kernel record for one launch, before anything is enqueued.
static std::shared_ptr<Kernel> newKernel(const KernelInfo &kernel, dim3 grid,
                                         dim3 block, std::size_t smem,
                                         cudaStream_t stream) {
  auto k = std::make_shared<Kernel>();
  k->id = runtime().next_id++;
  k->name = kernel.name ? kernel.name : "(unnamed)";
  k->fn = kernel.fn;
  k->grid = grid;
  k->block = block;
  k->smem = smem;
  k->stream = stream;
  return k;
}

KernelHandle launchTransformed(const KernelInfo &kernel, dim3 grid, dim3 block,
                               std::size_t smem, cudaStream_t stream,
                               Relaunch relaunch) {
  if (disabledByEnvironment()) {
    if (kernel.has_original) {
      launchOriginal(relaunch, grid, block, smem, stream);
      return KernelHandle();
    }
    reportNoOriginal(kernel);
  }
  configureFromEnvironmentOnce();
  std::shared_ptr<Kernel> k = newKernel(kernel, grid, block, smem, stream);
  k->relaunch = std::move(relaunch);
  if (Status st = validate(kernel, grid, block, k->total); !st.ok())
    return failedTransformed(std::move(k), std::move(st), kernel.has_original,
                             false);
  bool enqueued = false, announced = false;
  Status st = launchTransformedSteps(k, enqueued, announced);
  if (k->slot) {
    std::lock_guard<std::mutex> lock(runtime().mu);
    if (!enqueued) {
      k->ctx->free_slots.push_back(k->slot); // nothing can use it
      k->slot = nullptr;
    } else if (!k->captured) {
      // Make sure the done event exists in the stream even after a failed
      // step, so that the slot is reclaimed only once the stream passed.
      if (!st.ok())
        cudaEventRecord(k->slot->done, k->stream);
      runtime().live.push_back(k);
    }
  }
  if (!st.ok()) {
    if (announced)
      announceFailedLaunch(k);
    return failedTransformed(std::move(k), std::move(st), kernel.has_original,
                             enqueued);
  }
  if (announced)
    watch(k);
  return KernelHandle(std::move(k));
}

void launchRewritten(const KernelInfo &kernel, dim3 grid, dim3 block,
                     std::size_t smem, cudaStream_t stream,
                     LaunchClosure relaunch) {
  // Relaunch is copyable (std::function); the closure is not: shared.
  auto closure = std::make_shared<LaunchClosure>(std::move(relaunch));
  launchTransformed(kernel, grid, block, smem, stream,
                    [closure](const LaunchParams &p) { (*closure)(p); });
}

KernelHandle launchOpaque(const KernelInfo &kernel, dim3 grid, dim3 block,
                          std::size_t smem, cudaStream_t stream,
                          OpaqueLaunch launcher) {
  configureFromEnvironmentOnce();
  std::shared_ptr<Kernel> k = newKernel(kernel, grid, block, smem, stream);
  k->opaque = true;
  if (Status st = validate(kernel, grid, block, k->total); !st.ok()) {
    reportFirstFailure(*k, st, false);
    return failed(std::move(k), std::move(st));
  }
  bool announced = false, ran = false;
  Status st = [&]() -> Status {
    Runtime &r = runtime();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      SMPART_RETURN_IF_ERROR(deviceCtxLocked(r, k->ctx));
      k->sentinel = k->ctx->sentinel;
      reclaimLocked(r, false, k->ctx);
    }
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    SMPART_CUDA_CHECK(cudaStreamIsCapturing(stream, &cs));
    k->captured = cs == cudaStreamCaptureStatusActive;
    // A captured launch has no completion of its own (each replay is one):
    // no event, which nothing would ever reclaim.
    if (!k->captured) {
      SMPART_CUDA_CHECK(
          cudaEventCreateWithFlags(&k->opaque_done, cudaEventDisableTiming));
      announced = announceLaunch(k);
    }
    const cudaError_t before = cudaPeekAtLastError();
    ran = true;
    launcher(grid, block, smem, stream);
    const cudaError_t after = cudaPeekAtLastError();
    if (after != cudaSuccess && after != before)
      return cudaFailure(after, ("launch of kernel " + k->name).c_str(),
                         __FILE__, __LINE__);
    k->launched = k->total;
    if (!k->captured)
      SMPART_CUDA_CHECK(cudaEventRecord(k->opaque_done, stream));
    return Status();
  }();
  if (!st.ok()) {
    if (announced)
      announceFailedLaunch(k);
    // Never in the live list, so never reclaimed: nothing of it stays.
    if (k->opaque_done)
      cudaEventDestroy(k->opaque_done);
    k->opaque_done = nullptr;
    // The launcher is the program's own launch: when smpart failed before
    // it (no GPU, its set-up out of memory), it still runs, untracked, as
    // it would without smpart (and CUDA reports it as it would), rather
    // than the program's work being skipped.
    reportFirstFailure(*k, st, !ran);
    if (!ran)
      launcher(grid, block, smem, stream);
    return failed(std::move(k), std::move(st));
  }
  if (!k->captured) {
    std::lock_guard<std::mutex> lock(runtime().mu);
    runtime().live.push_back(k);
  }
  if (announced)
    watch(k);
  return KernelHandle(std::move(k));
}

void reserveSms(const void *owner, int device,
                const std::vector<unsigned> &ids) {
  SmMask m;
  for (unsigned id : ids)
    if (id < kMaxSms)
      m.set(id);
  Reservations &r = reservations();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_owner[owner] = {device, m};
}

void releaseSms(const void *owner) {
  Reservations &r = reservations();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_owner.erase(owner);
}

SmMask reservedSms(int device) {
  Reservations &r = reservations();
  std::lock_guard<std::mutex> lock(r.mu);
  SmMask m;
  for (const auto &[owner, ids] : r.by_owner)
    if (ids.first == device)
      m |= ids.second;
  return m;
}

} // namespace detail

Status init() {
  detail::DeviceCtx *ctx = nullptr;
  {
    detail::Runtime &r = detail::runtime();
    std::lock_guard<std::mutex> lock(r.mu);
    SMPART_RETURN_IF_ERROR(detail::deviceCtxLocked(r, ctx));
  }
  // What the first transformed launch would do: a program that then starts
  // kernels of its own that wait for the host (a gate, a persistent
  // server) has nothing of smpart left to load beside them.
  detail::preloadBeforeLaunch(nullptr, *ctx);
  return Status();
}

Status getLastError() {
  Status s = std::move(detail::t_last_error);
  detail::t_last_error = Status();
  return s;
}

Status peekLastError() { return detail::t_last_error; }

std::vector<KernelHandle> activeKernels() {
  detail::Runtime &r = detail::runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<KernelHandle> out;
  for (const auto &k : r.live)
    if (!k->deviceGone() && !detail::eventDone(k->doneEvent()))
      out.emplace_back(k);
  return out;
}

} // namespace smpart
