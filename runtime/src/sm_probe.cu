// The SM-id probe: which %smid values the GPU really has.
//
// %smid is neither dense nor fixed by PTX's contract, so masks are sets of
// real ids and plans name SMs by position in the sorted id list. At device
// initialisation the runtime launches this kernel, asynchronously, on a
// runtime-owned non-blocking stream, with enough CTAs to land on every SM;
// each CTA records its %smid and stays a few microseconds so that the
// block scheduler spreads the rest. The result is read when it is there and
// never waited for under the registry lock: launches need that lock, and
// the probe may sit behind other work on a busy GPU or a shared hardware
// queue. Ids are never invented: until the probes together saw every SM,
// DeviceInfo::sm_ids is empty and sm_ids_probed false, so no mask can name
// an SM and every kernel keeps its default mask (all SMs). A probe that saw
// only some SMs (the others were busy) is followed by another; the bitmap
// accumulates.
#include "kernel.hpp"

#include <chrono>
#include <thread>

namespace smpart {
namespace detail {

namespace {

__global__ void smIdProbe(unsigned *bitmap) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  if (threadIdx.x == 0 && id < kMaxSms)
    atomicOr(&bitmap[id / 32], 1u << (id % 32));
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < 20000);
}

/// Probe runs before the runtime stops trying: a GPU so busy that this
/// many runs cannot reach every SM leaves the ids unknown (and says so)
/// rather than keep a runtime stream occupied.
constexpr unsigned kMaxProbeRuns = 8;

/// Enqueues one probe run: the kernel ORs into the bitmap (never cleared
/// between runs, so they accumulate), then the bitmap goes to pinned host
/// memory and the event tells when it is there.
Status launchProbe(DeviceCtx &ctx) {
  cudaStream_t s = ctx.probe_stream;
  void *args[] = {&ctx.probe};
  // Four CTAs per SM of 1024 threads: at most two fit on an SM, so every
  // SM gets some while the others are held for 20 us.
  SMPART_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(&smIdProbe),
                                     dim3(4 * ctx.info.num_sms), dim3(1024),
                                     args, 0, s));
  SMPART_CUDA_CHECK(cudaMemcpyAsync(ctx.probe_host, ctx.probe,
                                    kMaskWords * sizeof(unsigned),
                                    cudaMemcpyDeviceToHost, s));
  SMPART_CUDA_CHECK(cudaEventRecord(ctx.probe_done, s));
  ctx.probe_pending = true;
  ++ctx.probe_runs;
  return Status();
}

} // namespace

cudaError_t launchSmIdProbe(unsigned *bitmap, unsigned ctas,
                            cudaStream_t stream) {
  void *args[] = {&bitmap};
  return cudaLaunchKernel(reinterpret_cast<const void *>(&smIdProbe),
                          dim3(ctas), dim3(1024), args, 0, stream);
}

Status startSmProbe(DeviceCtx &ctx) {
  ctx.info.sm_ids.clear();
  ctx.info.sm_ids_probed = false;
  SMPART_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&ctx.probe),
                               kMaskWords * sizeof(unsigned)));
  SMPART_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&ctx.probe_host),
                                  kMaskWords * sizeof(unsigned),
                                  cudaHostAllocDefault));
  SMPART_CUDA_CHECK(
      cudaEventCreateWithFlags(&ctx.probe_done, cudaEventDisableTiming));
  SMPART_CUDA_CHECK(
      cudaStreamCreateWithFlags(&ctx.probe_stream, cudaStreamNonBlocking));
  // On the runtime's own non-blocking stream, never the legacy one: a
  // legacy-stream operation breaks a capture in progress on any blocking
  // stream of the process.
  SMPART_CUDA_CHECK(cudaMemsetAsync(ctx.probe, 0, kMaskWords * sizeof(unsigned),
                                    ctx.probe_stream));
  return launchProbe(ctx);
}

void pollSmProbeLocked(DeviceCtx &ctx) {
  if (!ctx.probe_pending)
    return;
  const cudaError_t q = queryEvent(ctx.probe_done);
  if (q == cudaErrorNotReady)
    return;
  ctx.probe_pending = false;
  if (q != cudaSuccess)
    return; // the ids stay unknown; nothing is made up
  std::vector<unsigned> ids;
  for (unsigned id = 0; id < kMaxSms; ++id)
    if ((ctx.probe_host[id / 32] >> (id % 32)) & 1u)
      ids.push_back(id);
  if (ids.size() == ctx.info.num_sms) {
    ctx.info.sm_ids = std::move(ids);
    ctx.info.sm_ids_probed = true;
    return;
  }
  // Some SMs were busy with other work: look again. A failed relaunch
  // leaves the ids unknown.
  if (ctx.probe_runs < kMaxProbeRuns)
    (void)launchProbe(ctx);
}

} // namespace detail

SmMask smSet(const DeviceInfo &info, unsigned first, unsigned count) {
  SmMask m;
  for (unsigned i = first; i < first + count && i < info.sm_ids.size(); ++i)
    if (info.sm_ids[i] < kMaxSms)
      m.set(info.sm_ids[i]);
  return m;
}

Status deviceInfo(DeviceInfo &out) {
  // Waits for the probe with the registry lock released between looks, so
  // that launches on other threads go on meanwhile.
  detail::Runtime &r = detail::runtime();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    {
      detail::CaptureModeRelaxed relaxed; // the event query
      std::lock_guard<std::mutex> lock(r.mu);
      detail::DeviceCtx *ctx = nullptr;
      SMPART_RETURN_IF_ERROR(detail::deviceCtxLocked(r, ctx));
      detail::pollSmProbeLocked(*ctx);
      if (ctx->info.sm_ids_probed || !ctx->probe_pending ||
          std::chrono::steady_clock::now() >= deadline) {
        out = ctx->info;
        return Status();
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

} // namespace smpart
