// libsmpart host runtime: the registry of device contexts, control-block
// pools and live kernels. See smpart/runtime.hpp for the contract and
// runtime/README.md for the design.
#include "kernel.hpp"

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

} // namespace

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

} // namespace detail
} // namespace smpart
