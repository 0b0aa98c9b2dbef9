// The SM-id probe: which %smid values the GPU really has.
//
// %smid is neither dense nor fixed by PTX's contract, so masks are sets of
// real ids and plans name SMs by position in the sorted id list. At device
// initialisation the runtime launches this kernel, asynchronously, with
// enough CTAs to land on every SM; each CTA records its %smid and stays a
// few microseconds so that the block scheduler spreads the rest. The result
// is read when first needed (deviceInfo(), smSet()); if the GPU is too busy
// for the probe to finish in time, ids fall back to 0..num_sms-1 and
// DeviceInfo::sm_ids_probed says so. No call waits on it for longer.
#include "kernel.hpp"

#include <algorithm>
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

void denseIds(DeviceInfo &info) {
  info.sm_ids.resize(info.num_sms);
  for (unsigned i = 0; i < info.num_sms; ++i)
    info.sm_ids[i] = i;
  info.sm_ids_probed = false;
}

} // namespace

Status startSmProbe(DeviceCtx &ctx) {
  denseIds(ctx.info);
  cudaStream_t s = ctx.relaunch[0];
  SMPART_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&ctx.probe),
                               kMaskWords * sizeof(unsigned)));
  SMPART_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&ctx.probe_host),
                                  kMaskWords * sizeof(unsigned),
                                  cudaHostAllocDefault));
  SMPART_CUDA_CHECK(
      cudaEventCreateWithFlags(&ctx.probe_done, cudaEventDisableTiming));
  SMPART_CUDA_CHECK(
      cudaMemsetAsync(ctx.probe, 0, kMaskWords * sizeof(unsigned), s));
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
  return Status();
}

void finishSmProbe(DeviceCtx &ctx, int timeout_ms) {
  if (ctx.probe_read || !ctx.probe_done)
    return;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  cudaError_t q;
  while ((q = cudaEventQuery(ctx.probe_done)) == cudaErrorNotReady &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (q != cudaSuccess)
    return; // keep the dense ids; a later call may still read the probe
  ctx.probe_read = true;
  std::vector<unsigned> ids;
  for (unsigned id = 0; id < kMaxSms; ++id)
    if ((ctx.probe_host[id / 32] >> (id % 32)) & 1u)
      ids.push_back(id);
  if (ids.size() == ctx.info.num_sms) {
    ctx.info.sm_ids = std::move(ids);
    ctx.info.sm_ids_probed = true;
  }
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
  detail::Runtime &r = detail::runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  detail::DeviceCtx *ctx = nullptr;
  SMPART_RETURN_IF_ERROR(detail::deviceCtxLocked(r, ctx));
  detail::finishSmProbe(*ctx, 2000);
  out = ctx->info;
  return Status();
}

} // namespace smpart
