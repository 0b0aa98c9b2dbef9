// libsmpart host runtime: the registry of device contexts, control-block
// pools and live kernels. See smpart/runtime.hpp for the contract and
// runtime/README.md for the design.
#include "green_contexts.hpp"
#include "kernel.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace smpart {
namespace detail {

/// Never destroyed: CUDA objects must not be released after the driver
/// has shut down at process exit.
Runtime &runtime() {
  static Runtime *r = new Runtime;
  return *r;
}

namespace {

/// cuPointerGetAttribute, resolved once (libsmpart does not link the
/// driver); null where the driver does not give it.
using PointerAttribute = CUresult(CUDAAPI *)(void *, CUpointer_attribute,
                                             CUdeviceptr);
PointerAttribute pointerAttribute() {
  static const PointerAttribute f = reinterpret_cast<PointerAttribute>(
      green::runtimeResolver()("cuPointerGetAttribute", 4000));
  return f;
}

unsigned long long bufferId(const void *p) {
  unsigned long long id = 0;
  const PointerAttribute get = pointerAttribute();
  if (!get || get(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                  reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
    return 0;
  return id;
}

} // namespace

Status Sentinel::make() {
  SMPART_CUDA_CHECK(cudaHostAlloc(&ptr, 64, cudaHostAllocDefault));
  id = bufferId(ptr);
  return Status();
}

bool Sentinel::gone() const {
  KeepLastError keep;
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, ptr);
  // Gone only on evidence: an error says nothing (cudaErrorInvalidValue
  // from a thread whose current device has no context yet, a sticky error
  // of another context), and taking a healthy context for a reset one
  // would fail every kernel on it.
  if (e != cudaSuccess)
    return false;
  if (a.type != cudaMemoryTypeHost)
    return true;
  // Registered: this sentinel, or a new allocation at its address.
  const unsigned long long now = id ? bufferId(ptr) : 0;
  return now != 0 && now != id;
}

namespace {

Status initLocked(Runtime &r) {
  if (r.initialised)
    return r.init_status;
  r.initialised = true;
  r.init_status = [] {
    int count = 0;
    SMPART_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0)
      return Status(Errc::kNoDevice,
                    "no usable CUDA GPU: cudaGetDeviceCount "
                    "reports 0 devices",
                    static_cast<int>(cudaErrorNoDevice));
    return Status();
  }();
  return r.init_status;
}

/// cudaDeviceReset destroys every stream, event and allocation of the
/// device behind the runtime's back. The pinned sentinel tells.
bool wasReset(const DeviceCtx &ctx) { return ctx.sentinel.gone(); }

/// Forgets a reset device: its handles are dead (never destroyed: they
/// belong to a context that no longer exists), and its live kernels fail.
void forgetDeviceLocked(Runtime &r, int dev) {
  for (std::size_t i = 0; i < r.live.size();) {
    Kernel &k = *r.live[i];
    if (k.ctx && k.ctx->info.device == dev) {
      k.reset = true;
      r.live[i] = r.live.back();
      r.live.pop_back();
      continue;
    }
    ++i;
  }
  r.reclaim_cursor = 0;
  r.fns.clear();
  r.devices.erase(dev);
}

/// Slots given back by destroyed graphs, by context serial. Never
/// destroyed, like the registry: graphs may outlive main().
struct GivenBack {
  std::mutex mu;
  std::vector<std::pair<unsigned long long, Slot *>> slots;
};
GivenBack &givenBack() {
  static GivenBack *g = new GivenBack;
  return *g;
}

/// Moves the slots given back to `ctx` into its pool. Those of other
/// devices wait for theirs; those of contexts a reset replaced are never
/// taken (their device memory went with them).
void takeGivenBackLocked(DeviceCtx &ctx) {
  GivenBack &g = givenBack();
  std::lock_guard<std::mutex> lock(g.mu);
  auto mine =
      std::stable_partition(g.slots.begin(), g.slots.end(), [&](const auto &s) {
        return s.first != ctx.serial;
      });
  for (auto it = mine; it != g.slots.end(); ++it)
    ctx.free_slots.push_back(it->second);
  g.slots.erase(mine, g.slots.end());
}

} // namespace

void giveBackFromGraph(unsigned long long serial, Slot *slot) {
  GivenBack &g = givenBack();
  std::lock_guard<std::mutex> lock(g.mu);
  g.slots.emplace_back(serial, slot);
}

Status deviceCtxLocked(Runtime &r, DeviceCtx *&out) {
  // First use may come during a capture on this or another thread
  // (init(), deviceInfo(), a captured launch): the allocations below are
  // legal then only in relaxed mode.
  CaptureModeRelaxed relaxed;
  SMPART_RETURN_IF_ERROR(initLocked(r));
  int dev = 0;
  SMPART_CUDA_CHECK(cudaGetDevice(&dev));
  auto it = r.devices.find(dev);
  if (it != r.devices.end()) {
    if (!wasReset(it->second)) {
      out = &it->second;
      return Status();
    }
    forgetDeviceLocked(r, dev);
  }
  static unsigned long long next_serial = 0; // under Runtime::mu
  DeviceCtx ctx;
  ctx.serial = ++next_serial;
  ctx.info.device = dev;
  int v = 0;
  SMPART_CUDA_CHECK(
      cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
  ctx.info.num_sms = static_cast<unsigned>(v);
  SMPART_CUDA_CHECK(
      cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  ctx.info.max_threads_per_sm = static_cast<unsigned>(v);
  SMPART_CUDA_CHECK(
      cudaDeviceGetAttribute(&v, cudaDevAttrMaxBlocksPerMultiprocessor, dev));
  ctx.info.max_blocks_per_sm = static_cast<unsigned>(v);
  SMPART_CUDA_CHECK(
      cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, dev));
  ctx.memory_pools = v != 0;
  SMPART_RETURN_IF_ERROR(ctx.sentinel.make());
  out = &r.devices.emplace(dev, std::move(ctx)).first->second;
  return startSmProbe(*out);
}

/// Control blocks come in chunks that are never freed (pinned allocation
/// costs far more than a launch); finished kernels return their slot. The
/// caller may be capturing a stream: launch() switches the thread to
/// relaxed capture mode around this, as CUDA's own libraries do for
/// allocations made during capture. Nothing here touches a stream: the
/// device State is not zeroed now (cudaMemset runs on the legacy stream,
/// which breaks a capture in progress on any blocking stream, such as
/// cudaStreamPerThread, in every capture mode); each slot is fresh instead,
/// and its first launch copies the whole zeroed image on its own stream.
Status acquireSlotLocked(DeviceCtx &ctx, Slot *&out) {
  takeGivenBackLocked(ctx);
  if (ctx.free_slots.empty()) {
    Status st = [&]() -> Status {
      // Ordinary memory, pinned and mapped by registration rather than
      // cudaHostAlloc: a context teardown (cudaDeviceReset, process exit)
      // frees what cudaHostAlloc gave, under a notice thread or a handle
      // that may still read its Notices or write its knobs; registered
      // memory is only unpinned and stays readable.
      constexpr std::size_t kPage = 4096;
      const std::size_t bytes =
          (sizeof(HostSlot) * kSlotsPerChunk + kPage - 1) / kPage * kPage;
      auto *host = static_cast<HostSlot *>(std::aligned_alloc(kPage, bytes));
      if (!host)
        return cudaFailure(cudaErrorMemoryAllocation, "std::aligned_alloc",
                           __FILE__, __LINE__);
      if (cudaError_t err =
              cudaHostRegister(host, bytes, cudaHostRegisterMapped);
          err != cudaSuccess) {
        std::free(host);
        SMPART_CUDA_CHECK(err);
      }
      // A GPU out of memory (a framework that took it all) fails here on
      // every launch: give the pinned pages back each time.
      auto unpin = [&](cudaError_t err, const char *what, int line) {
        cudaHostUnregister(host);
        std::free(host);
        return cudaFailure(err, what, __FILE__, line);
      };
      HostSlot *mapped = nullptr;
      if (cudaError_t err = cudaHostGetDevicePointer(
              reinterpret_cast<void **>(&mapped), host, 0);
          err != cudaSuccess)
        return unpin(err, "cudaHostGetDevicePointer", __LINE__);
      State *state = nullptr;
      if (cudaError_t err = cudaMalloc(reinterpret_cast<void **>(&state),
                                       sizeof(State) * kSlotsPerChunk);
          err != cudaSuccess)
        return unpin(err, "cudaMalloc(slot states)", __LINE__);
      // The images' slot words stay zero for good: only the header of an
      // image is ever rewritten.
      std::memset(static_cast<void *>(host), 0,
                  sizeof(HostSlot) * kSlotsPerChunk);
      for (unsigned i = 0; i < kSlotsPerChunk; ++i) {
        auto *s = new Slot;
        s->host = host + i;
        s->mapped = mapped + i;
        s->state = state + i;
        for (cudaEvent_t *e : {&s->started, &s->done})
          SMPART_CUDA_CHECK(
              cudaEventCreateWithFlags(e, cudaEventDisableTiming));
        ctx.free_slots.push_back(s);
      }
      return Status();
    }();
    SMPART_RETURN_IF_ERROR(st);
  }
  out = ctx.free_slots.back();
  ctx.free_slots.pop_back();
  return Status();
}

bool eventDone(cudaEvent_t e) { return queryEvent(e) == cudaSuccess; }

Status relaunchStreamLocked(DeviceCtx &ctx, unsigned long long owner,
                            cudaStream_t &s, cudaEvent_t &idle,
                            std::size_t &index) {
  s = nullptr;
  idle = nullptr;
  index = RelaunchStreamPool::kNone;
  const std::size_t i = ctx.relaunch_pool.acquire(
      owner, [&](std::size_t j) { return !eventDone(ctx.relaunch_idle[j]); });
  if (i == RelaunchStreamPool::kNone)
    return Status();
  if (i == ctx.relaunch.size()) {
    // Another thread may be capturing in global mode: creating a stream
    // and an event must not invalidate its capture.
    CaptureModeRelaxed relaxed;
    cudaStream_t ns = nullptr;
    cudaEvent_t ne = nullptr;
    SMPART_CUDA_CHECK(cudaStreamCreateWithFlags(&ns, cudaStreamNonBlocking));
    if (cudaError_t err = cudaEventCreateWithFlags(&ne, cudaEventDisableTiming);
        err != cudaSuccess) {
      cudaStreamDestroy(ns);
      SMPART_CUDA_CHECK(err);
    }
    ctx.relaunch.push_back(ns);
    ctx.relaunch_idle.push_back(ne);
    ctx.relaunch_pool.added(owner);
  }
  s = ctx.relaunch[i];
  idle = ctx.relaunch_idle[i];
  index = i;
  return Status();
}

namespace {

/// A kernel's slot can go back to the pool once nothing can touch it any
/// more: no handle refers to the kernel, its own kernel completed and every
/// relaunched instance completed too.
bool reclaimable(const std::shared_ptr<Kernel> &p) {
  Kernel &k = *p;
  if (p.use_count() != 1 || k.captured)
    return false;
  if (!eventDone(k.doneEvent()))
    return false;
  if (k.opaque)
    return true;
  std::lock_guard<std::mutex> lock(k.mu);
  for (cudaEvent_t e : k.relaunch_done)
    if (!eventDone(e))
      return false;
  return true;
}

void release(Kernel &k) {
  if (k.slot && k.ctx)
    k.ctx->free_slots.push_back(k.slot);
  k.slot = nullptr;
  if (k.opaque_done)
    cudaEventDestroy(k.opaque_done);
  k.opaque_done = nullptr;
  for (cudaEvent_t e : k.relaunch_done)
    cudaEventDestroy(e);
  k.relaunch_done.clear();
}

} // namespace

void reclaimLocked(Runtime &r, bool all, const DeviceCtx *checked) {
  ResetLookup lookup(checked ? &checked->sentinel : nullptr);
  // A few kernels per launch keep a loop of asynchronous launches linear;
  // a full pass only when the pool would otherwise grow.
  std::size_t budget = all ? r.live.size() : 4;
  while (budget-- > 0 && !r.live.empty()) {
    if (r.reclaim_cursor >= r.live.size())
      r.reclaim_cursor = 0;
    std::shared_ptr<Kernel> &p = r.live[r.reclaim_cursor];
    // Of a device reset meanwhile (another one than the caller's, which
    // deviceCtxLocked forgot): its events, slot and context are gone with
    // it, and nothing of it is touched.
    if (lookup.gone(*p)) {
      p = std::move(r.live.back());
      r.live.pop_back();
      continue;
    }
    if (!reclaimable(p)) {
      ++r.reclaim_cursor;
      continue;
    }
    release(*p);
    p = std::move(r.live.back());
    r.live.pop_back();
  }
}

} // namespace detail
} // namespace smpart
