// libsmpart host runtime: launch, knobs, progress and completion of
// transformed kernels. See smpart/runtime.hpp for the contract and
// runtime/README.md for the design.
#include "smpart/runtime.hpp"

#include "smpart/detail/cuda_check.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace smpart {
namespace detail {

cudaError_t launchJoin(const State *state, unsigned long long total,
                       cudaStream_t stream);

Status cudaFailure(cudaError_t err, const char *api, const char *file,
                   int line) {
  const char *base = std::strrchr(file, '/');
  std::string msg = std::string(api) + " failed: " + cudaGetErrorName(err) +
                    ": " + cudaGetErrorString(err) + " (at " +
                    (base ? base + 1 : file) + ":" + std::to_string(line) + ")";
  const bool no_device = err == cudaErrorInsufficientDriver ||
                         err == cudaErrorNoDevice ||
                         err == cudaErrorDevicesUnavailable;
  if (no_device)
    msg = "no usable CUDA GPU: " + msg;
  return Status(no_device ? Errc::kNoDevice : Errc::kCuda, std::move(msg),
                static_cast<int>(err));
}

namespace {

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

} // namespace

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

namespace {

struct Runtime {
  std::mutex mu;
  bool initialised = false;
  Status init_status;
  std::map<int, DeviceCtx> devices;
  std::vector<std::shared_ptr<Kernel>> live;
};

/// Never destroyed: CUDA objects must not be released after the driver
/// has shut down at process exit.
Runtime &runtime() {
  static Runtime *r = new Runtime;
  return *r;
}

thread_local Status t_last_error;

Status initLocked(Runtime &r) {
  if (r.initialised)
    return r.init_status;
  r.initialised = true;
  r.init_status = [] {
    int count = 0;
    SMPART_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0)
      return Status(Errc::kNoDevice, "no usable CUDA GPU: cudaGetDeviceCount "
                                     "reports 0 devices",
                    static_cast<int>(cudaErrorNoDevice));
    return Status();
  }();
  return r.init_status;
}

Status deviceCtxLocked(Runtime &r, DeviceCtx *&out) {
  SMPART_RETURN_IF_ERROR(initLocked(r));
  int dev = 0;
  SMPART_CUDA_CHECK(cudaGetDevice(&dev));
  auto it = r.devices.find(dev);
  if (it != r.devices.end()) {
    out = &it->second;
    return Status();
  }
  DeviceCtx ctx;
  ctx.info.device = dev;
  int v = 0;
  SMPART_CUDA_CHECK(
      cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
  ctx.info.num_sms = static_cast<unsigned>(v);
  SMPART_CUDA_CHECK(cudaDeviceGetAttribute(
      &v, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  ctx.info.max_threads_per_sm = static_cast<unsigned>(v);
  SMPART_CUDA_CHECK(cudaDeviceGetAttribute(
      &v, cudaDevAttrMaxBlocksPerMultiprocessor, dev));
  ctx.info.max_blocks_per_sm = static_cast<unsigned>(v);
  SMPART_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.side, cudaStreamNonBlocking));
  for (cudaStream_t &s : ctx.relaunch)
    SMPART_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  out = &r.devices.emplace(dev, std::move(ctx)).first->second;
  return Status();
}

/// Control blocks come in chunks that are never freed (pinned allocation
/// costs far more than a launch); finished kernels return their slot.
Status acquireSlotLocked(DeviceCtx &ctx, Slot *&out) {
  if (ctx.free_slots.empty()) {
    HostSlot *host = nullptr;
    SMPART_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&host),
                                    sizeof(HostSlot) * kSlotsPerChunk,
                                    cudaHostAllocMapped));
    HostSlot *mapped = nullptr;
    SMPART_CUDA_CHECK(
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&mapped), host, 0));
    State *state = nullptr;
    SMPART_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&state),
                                 sizeof(State) * kSlotsPerChunk));
    std::memset(host, 0, sizeof(HostSlot) * kSlotsPerChunk);
    for (unsigned i = 0; i < kSlotsPerChunk; ++i) {
      auto *s = new Slot;
      s->host = host + i;
      s->mapped = mapped + i;
      s->state = state + i;
      for (cudaEvent_t *e : {&s->zeroed, &s->started, &s->first_done, &s->done})
        SMPART_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
      ctx.free_slots.push_back(s);
    }
  }
  out = ctx.free_slots.back();
  ctx.free_slots.pop_back();
  return Status();
}

bool eventDone(cudaEvent_t e) { return cudaEventQuery(e) == cudaSuccess; }

/// Releases kernels that are done and no longer referenced by a handle.
void reclaimLocked(Runtime &r) {
  for (std::size_t i = 0; i < r.live.size();) {
    Kernel &k = *r.live[i];
    bool done = r.live[i].use_count() == 1 && eventDone(k.doneEvent());
    if (done && !k.opaque) {
      std::lock_guard<std::mutex> lock(k.mu);
      done = eventDone(k.slot->first_done);
      for (cudaEvent_t e : k.relaunch_done)
        done = done && eventDone(e);
    }
    if (!done) {
      ++i;
      continue;
    }
    if (k.slot)
      k.ctx->free_slots.push_back(k.slot);
    if (k.opaque_done)
      cudaEventDestroy(k.opaque_done);
    r.live[i] = r.live.back();
    r.live.pop_back();
  }
}

KernelHandle failed(std::shared_ptr<Kernel> k, Status st) {
  k->status = st;
  t_last_error = std::move(st);
  return KernelHandle(std::move(k));
}

Status validate(dim3 grid, unsigned long long &total) {
  total = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  if (total == 0)
    return Status(Errc::kInvalidArgument,
                  "launch with an empty grid (" + std::to_string(grid.x) +
                      ", " + std::to_string(grid.y) + ", " +
                      std::to_string(grid.z) + ")",
                  static_cast<int>(cudaErrorInvalidConfiguration));
  return Status();
}

Status notSupported(const Kernel &k, const char *what) {
  return Status(Errc::kNotSupported,
                std::string(what) + " on opaque kernel " + k.name +
                    ": it was not transformed and takes no knobs");
}

} // namespace

/// The steps of a transformed launch; any failure leaves a status.
static Status launchTransformed(Kernel &k) {
  Runtime &r = runtime();
  unsigned threads = k.block.x * k.block.y * k.block.z;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    SMPART_RETURN_IF_ERROR(deviceCtxLocked(r, k.ctx));
    reclaimLocked(r);
    SMPART_RETURN_IF_ERROR(acquireSlotLocked(*k.ctx, k.slot));
  }
  if (k.fn) {
    int occ = 0;
    SMPART_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &occ, k.fn, static_cast<int>(threads), k.smem));
    // 0: the configuration cannot run at all; the launch below reports why.
    k.occupancy = occ > 0 ? static_cast<unsigned>(occ) : 1u;
  } else {
    k.occupancy = occupancyFromThreads(threads, k.ctx->info.max_threads_per_sm,
                                       k.ctx->info.max_blocks_per_sm);
  }
  Slot &s = *k.slot;
  initKnobs(s.host->knobs, k.occupancy);
  s.host->notices.last_block_taken = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Clear the state on the side stream, so that progress() copies (also on
  // the side stream) never see the previous user of the slot.
  SMPART_CUDA_CHECK(cudaMemsetAsync(s.state, 0, sizeof(State), k.ctx->side));
  SMPART_CUDA_CHECK(cudaEventRecord(s.zeroed, k.ctx->side));
  SMPART_CUDA_CHECK(cudaStreamWaitEvent(k.stream, s.zeroed, 0));
  // Relaunches wait for this point: the user's earlier work is done.
  SMPART_CUDA_CHECK(cudaEventRecord(s.started, k.stream));
  {
    std::lock_guard<std::mutex> lock(k.mu);
    SMPART_RETURN_IF_ERROR(k.launchInstance(k.ctasToLaunch(), k.stream));
  }
  SMPART_CUDA_CHECK(cudaEventRecord(s.first_done, k.stream));
  SMPART_CUDA_CHECK(launchJoin(s.state, k.total, k.stream));
  SMPART_CUDA_CHECK(cudaEventRecord(s.done, k.stream));
  return Status();
}

} // namespace detail

using detail::Kernel;

KernelHandle launch(const KernelInfo &kernel, dim3 grid, dim3 block,
                    std::size_t smem, cudaStream_t stream, Relaunch relaunch) {
  auto k = std::make_shared<Kernel>();
  k->name = kernel.name ? kernel.name : "(unnamed)";
  k->fn = kernel.fn;
  k->grid = grid;
  k->block = block;
  k->smem = smem;
  k->stream = stream;
  k->relaunch = std::move(relaunch);
  if (Status st = detail::validate(grid, k->total); !st.ok())
    return detail::failed(std::move(k), std::move(st));
  if (Status st = detail::launchTransformed(*k); !st.ok()) {
    // A slot whose kernel never got enqueued can be reused.
    if (k->slot && k->launched == 0) {
      std::lock_guard<std::mutex> lock(detail::runtime().mu);
      k->ctx->free_slots.push_back(k->slot);
      k->slot = nullptr;
    }
    return detail::failed(std::move(k), std::move(st));
  }
  {
    std::lock_guard<std::mutex> lock(detail::runtime().mu);
    detail::runtime().live.push_back(k);
  }
  return KernelHandle(std::move(k));
}

KernelHandle launchOpaque(const KernelInfo &kernel, dim3 grid, dim3 block,
                          std::size_t smem, cudaStream_t stream,
                          OpaqueLaunch launcher) {
  auto k = std::make_shared<Kernel>();
  k->name = kernel.name ? kernel.name : "(unnamed)";
  k->fn = kernel.fn;
  k->opaque = true;
  k->grid = grid;
  k->block = block;
  k->smem = smem;
  k->stream = stream;
  if (Status st = detail::validate(grid, k->total); !st.ok())
    return detail::failed(std::move(k), std::move(st));
  Status st = [&]() -> Status {
    detail::Runtime &r = detail::runtime();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      SMPART_RETURN_IF_ERROR(detail::deviceCtxLocked(r, k->ctx));
      detail::reclaimLocked(r);
    }
    SMPART_CUDA_CHECK(
        cudaEventCreateWithFlags(&k->opaque_done, cudaEventDisableTiming));
    launcher(grid, block, smem, stream);
    const cudaError_t err = cudaPeekAtLastError();
    if (err != cudaSuccess)
      return detail::cudaFailure(err, ("launch of kernel " + k->name).c_str(),
                                 __FILE__, __LINE__);
    k->launched = k->total;
    SMPART_CUDA_CHECK(cudaEventRecord(k->opaque_done, stream));
    return Status();
  }();
  if (!st.ok())
    return detail::failed(std::move(k), std::move(st));
  std::lock_guard<std::mutex> lock(detail::runtime().mu);
  detail::runtime().live.push_back(k);
  return KernelHandle(std::move(k));
}

Status init() {
  detail::Runtime &r = detail::runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  detail::DeviceCtx *ctx = nullptr;
  return detail::deviceCtxLocked(r, ctx);
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
    if (!detail::eventDone(k->doneEvent()))
      out.emplace_back(k);
  return out;
}

// ---- KernelHandle ----------------------------------------------------------

namespace {
Status emptyHandle() {
  return Status(Errc::kInvalidArgument, "empty smpart::KernelHandle");
}
} // namespace

/// Common prologue of knob calls: a usable, transformed kernel.
#define SMPART_KNOB_PROLOGUE(what)                                             \
  if (!k_)                                                                     \
    return emptyHandle();                                                      \
  if (!k_->status.ok())                                                        \
    return k_->status;                                                         \
  if (k_->opaque)                                                              \
    return detail::notSupported(*k_, what)

Status KernelHandle::status() const { return k_ ? k_->status : emptyHandle(); }
bool KernelHandle::opaque() const { return k_ && k_->opaque; }
const char *KernelHandle::name() const { return k_ ? k_->name.c_str() : ""; }
unsigned long long KernelHandle::totalBlocks() const {
  return k_ ? k_->total : 0;
}
unsigned long long KernelHandle::launchedCtas() const {
  if (!k_)
    return 0;
  std::lock_guard<std::mutex> lock(k_->mu);
  return k_->launched;
}
unsigned KernelHandle::occupancy() const { return k_ ? k_->occupancy : 0; }
DeviceInfo KernelHandle::device() const {
  return k_ && k_->ctx ? k_->ctx->info : DeviceInfo{};
}

Status KernelHandle::setSmMask(const SmMask &mask) {
  SMPART_KNOB_PROLOGUE("setSmMask");
  detail::storeMask(k_->slot->host->knobs, mask);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::setCtasPerSm(unsigned n) {
  SMPART_KNOB_PROLOGUE("setCtasPerSm");
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setCtasPerSm(" + std::to_string(n) + "): at most " +
                      std::to_string(kMaxCtasPerSm));
  k_->slot->host->knobs.ctas_per_sm = n;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::setBypassCtasPerSm(unsigned n) {
  SMPART_KNOB_PROLOGUE("setBypassCtasPerSm");
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setBypassCtasPerSm(" + std::to_string(n) + "): at most " +
                      std::to_string(kMaxCtasPerSm));
  k_->slot->host->knobs.bypass_ctas_per_sm = n;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::preempt() {
  SMPART_KNOB_PROLOGUE("preempt");
  std::lock_guard<std::mutex> lock(k_->mu);
  k_->preempted = true;
  k_->slot->host->knobs.preempt = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::resume(unsigned long long ctas) {
  SMPART_KNOB_PROLOGUE("resume");
  {
    std::lock_guard<std::mutex> lock(k_->mu);
    k_->preempted = false;
    k_->slot->host->knobs.preempt = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  return grow(ctas);
}

Status KernelHandle::grow(unsigned long long ctas) {
  SMPART_KNOB_PROLOGUE("grow");
  std::lock_guard<std::mutex> lock(k_->mu);
  if (k_->preempted)
    return Status(Errc::kPreempted,
                  "grow on preempted kernel " + k_->name + ": resume it");
  if (ctas == 0)
    ctas = k_->ctasToLaunch();
  cudaStream_t s;
  {
    std::lock_guard<std::mutex> rlock(detail::runtime().mu);
    detail::DeviceCtx &ctx = *k_->ctx;
    s = ctx.relaunch[ctx.next_relaunch++ % detail::kRelaunchStreams];
  }
  // Same inputs as the first instance: after the user's earlier work.
  SMPART_CUDA_CHECK(cudaStreamWaitEvent(s, k_->slot->started, 0));
  SMPART_RETURN_IF_ERROR(k_->launchInstance(ctas, s));
  cudaEvent_t e = nullptr;
  SMPART_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  k_->relaunch_done.push_back(e);
  SMPART_CUDA_CHECK(cudaEventRecord(e, s));
  return Status();
}

Knobs KernelHandle::knobs() const {
  Knobs out{};
  if (!k_ || !k_->slot)
    return out;
  const volatile Knobs &k = k_->slot->host->knobs;
  for (unsigned w = 0; w < kMaxSms / 32; ++w)
    out.sm_mask[w] = k.sm_mask[w];
  out.ctas_per_sm = k.ctas_per_sm;
  out.bypass_ctas_per_sm = k.bypass_ctas_per_sm;
  out.preempt = k.preempt;
  return out;
}

Status KernelHandle::progress(Progress &out) const {
  if (!k_)
    return emptyHandle();
  if (!k_->status.ok())
    return k_->status;
  out = Progress{};
  out.total = k_->total;
  if (k_->opaque) {
    const cudaError_t q = cudaEventQuery(k_->opaque_done);
    if (q != cudaSuccess && q != cudaErrorNotReady)
      SMPART_CUDA_CHECK(q);
    out.taken = out.done = q == cudaSuccess ? k_->total : 0;
    return Status();
  }
  detail::Slot &s = *k_->slot;
  cudaStream_t side = k_->ctx->side;
  // One asynchronous copy on the side stream: it runs beside the kernel,
  // never behind it.
  SMPART_CUDA_CHECK(cudaMemcpyAsync(&s.host->snapshot, s.state, sizeof(State),
                                    cudaMemcpyDeviceToHost, side));
  SMPART_CUDA_CHECK(cudaStreamSynchronize(side));
  const State &st = s.host->snapshot;
  out.taken = std::min(st.next_block, k_->total);
  out.done = st.blocks_done;
  out.resident_ctas = st.resident_ctas;
  return Status();
}

bool KernelHandle::lastBlockTaken() const {
  if (!k_ || !k_->status.ok())
    return false;
  if (k_->opaque)
    return detail::eventDone(k_->opaque_done);
  return k_->slot->host->notices.last_block_taken != 0;
}

Status KernelHandle::onLastBlockTaken(std::function<void()> cb) {
  SMPART_KNOB_PROLOGUE("onLastBlockTaken");
  std::lock_guard<std::mutex> lock(k_->mu);
  if (k_->watcher.joinable())
    return Status(Errc::kInvalidArgument,
                  "onLastBlockTaken: a callback is already set for " +
                      k_->name);
  detail::Kernel *k = k_.get();
  k_->watcher = std::thread([k, cb = std::move(cb)] {
    const volatile Notices &n = k->slot->host->notices;
    while (!n.last_block_taken) {
      if (k->stop_watch)
        return;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    cb();
  });
  return Status();
}

Status KernelHandle::wait() {
  if (!k_)
    return emptyHandle();
  if (!k_->status.ok())
    return k_->status;
  if (!k_->opaque) {
    bool preempted;
    {
      std::lock_guard<std::mutex> lock(k_->mu);
      preempted = k_->preempted;
    }
    if (preempted) {
      SMPART_RETURN_IF_ERROR(drain());
      Progress p;
      SMPART_RETURN_IF_ERROR(progress(p));
      if (p.done < p.total)
        return Status(Errc::kPreempted,
                      "wait on preempted kernel " + k_->name + ": " +
                          std::to_string(p.done) + " of " +
                          std::to_string(p.total) +
                          " logical blocks done; resume it first");
    }
  }
  SMPART_CUDA_CHECK(cudaEventSynchronize(k_->doneEvent()));
  return Status();
}

Status KernelHandle::drain() {
  if (!k_)
    return emptyHandle();
  if (!k_->status.ok())
    return k_->status;
  if (k_->opaque) {
    SMPART_CUDA_CHECK(cudaEventSynchronize(k_->opaque_done));
    return Status();
  }
  SMPART_CUDA_CHECK(cudaEventSynchronize(k_->slot->first_done));
  std::vector<cudaEvent_t> events;
  {
    std::lock_guard<std::mutex> lock(k_->mu);
    events = k_->relaunch_done;
  }
  for (cudaEvent_t e : events)
    SMPART_CUDA_CHECK(cudaEventSynchronize(e));
  return Status();
}

cudaEvent_t KernelHandle::doneEvent() const {
  return k_ && k_->status.ok() ? k_->doneEvent() : nullptr;
}

} // namespace smpart
