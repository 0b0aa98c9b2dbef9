// Kernels for the GPU tests and benchmarks, in original and rewritten form
// (the rewritten form is what smpart-transform produces, written out here so
// that the GPU checks do not depend on building the tool). Each logical
// block spins for `spin_ns` and records the SM it ran on, whether its CTA
// was tagged, and which physical CTA ran it.
#pragma once

#include "smpart/device.cuh"
#include "smpart/runtime.hpp"

namespace smpart_test {

struct BlockRecord {
  unsigned smid;
  unsigned bypass;
  unsigned cta;
  unsigned runs;
  unsigned long long start_ns; ///< thread 0's %globaltimer as the block began
};

using smpart::detail::globalTimerNs;

__device__ inline void spinFor(unsigned long long ns) {
  const unsigned long long start = globalTimerNs();
  while (globalTimerNs() - start < ns) {
  }
}

static __global__ void recordOriginal(BlockRecord *rec, float *out,
                                      unsigned long long spin_ns) {
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned long long start = globalTimerNs();
  if (spin_ns)
    spinFor(spin_ns);
  out[b * blockDim.x + threadIdx.x] = b * 2.0f + threadIdx.x;
  if (threadIdx.x != 0)
    return;
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  rec[b].start_ns = start;
  rec[b].smid = id;
  rec[b].cta = 0;
  rec[b].bypass = 0;
  atomicAdd(&rec[b].runs, 1u);
}

static __global__ void recordRewritten(smpart::LaunchControl smpart_ctl,
                                       BlockRecord *rec, float *out,
                                       unsigned long long spin_ns) {
  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
    const unsigned physical = ::blockIdx.x;
    const uint3 blockIdx = smpart_cta.blockIdx();
    const dim3 gridDim = smpart_cta.gridDim();
    {
      const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
      const unsigned long long start = globalTimerNs();
      if (spin_ns)
        spinFor(spin_ns);
      out[b * blockDim.x + threadIdx.x] = b * 2.0f + threadIdx.x;
      if (threadIdx.x != 0)
        goto smpart_next_block;
      unsigned id;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
      rec[b].start_ns = start;
      rec[b].smid = id;
      rec[b].cta = physical;
      rec[b].bypass = smpart_cta.bypass();
      atomicAdd(&rec[b].runs, 1u);
    }
  smpart_next_block:;
  }
}

/// What the rewritten launch of recordOriginal<<<grid, block, 0, s>>> is.
static inline smpart::KernelHandle launchRecord(dim3 grid, unsigned block,
                                                cudaStream_t s,
                                                BlockRecord *rec, float *out,
                                                unsigned long long spin_ns) {
  return smpart::launch(
      {"recordOriginal", reinterpret_cast<const void *>(&recordRewritten)},
      grid, block, 0, s,
      [smpart_args = std::make_tuple(rec, out, spin_ns)](
          const smpart::LaunchParams &smpart_p) {
        std::apply(
            [&](const auto &...smpart_a) {
              recordRewritten<<<smpart_p.grid, smpart_p.block, smpart_p.smem,
                                smpart_p.stream>>>(smpart_p.ctl, smpart_a...);
            },
            smpart_args);
      });
}

/// Captures launchRecord on stream 0 in a translation unit built with
/// --default-stream per-thread, replays it once (per_thread_stream.cu).
cudaError_t launchOnPerThreadDefaultStreamCaptured(BlockRecord *rec, float *out,
                                                   unsigned blocks);

/// A kernel that takes blocks of at most 64 threads.
static __global__ void __launch_bounds__(64) boundedOriginal(float *out) {
  out[threadIdx.x] = 1.0f;
}

/// Holds a stream until the host opens the gate (host-mapped flag), so that
/// knobs can be set before any CTA of the next launch starts.
static __global__ void gateKernel(const volatile unsigned *open) {
  while (!*open)
    __nanosleep(1000);
}

} // namespace smpart_test
