// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// A warp collective reachable after an early return: in the original the
// lanes that returned have exited and a full-mask shuffle does not wait for
// them; in the persistent form they wait at the loop's barrier instead, and
// the shuffle would wait for them forever. Refused, with notes.
#include "cuda.h"

__global__ void warp_sum(int n, const int *in, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int v = in[i];
  for (unsigned d = 16; d > 0; d /= 2)
    v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x % 32 == 0)
    atomicAdd(out, v);
}
// WARN: {{^}}{{.*}}warp-collective-after-return.cu:[[@LINE-10]]:17: warning: smpart: kernel 'warp_sum' not transformed: warp collective at line [[@LINE-4]] is reachable after the early return at line [[@LINE-7]] (lanes that returned would not have exited, and the collective would wait for them)
// WARN-NEXT: {{^}}{{.*}}warp-collective-after-return.cu:[[@LINE-8]]:5: note: early return here
// WARN-NEXT: {{^}}{{.*}}warp-collective-after-return.cu:[[@LINE-6]]:10: note: warp collective here

// A tile of cooperative groups synchronises its lanes the same way.
namespace cg = cooperative_groups;
__global__ void tile_sync(int n, int *out) {
  if (threadIdx.x >= n)
    return;
  cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
  out[threadIdx.x] = 1;
  t.sync();
}
// WARN: {{^}}{{.*}}warp-collective-after-return.cu:[[@LINE-7]]:17: warning: smpart: kernel 'tile_sync' not transformed: warp collective at line [[@LINE-2]] is reachable after the early return at line [[@LINE-5]]
