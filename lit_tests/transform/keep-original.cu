// RUN: %smpart %s -- %stubflags | FileCheck --check-prefixes=CHECK,ALL %s
// RUN: %smpart --keep-original=external %s -- %stubflags | FileCheck --check-prefixes=CHECK,EXT %s
// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck --check-prefixes=CHECK,HDR %s
// RUN: not %smpart --keep-original=some %s -- %stubflags 2>&1 | FileCheck --check-prefix=BAD %s
// Which kernels keep their original definition beside the rewritten one:
// every kernel (all, the default), those with external linkage
// (external), or only those other files must see (headers). A kernel whose
// device functions read blockIdx keeps none: they are rewritten for the
// persistent form only. A launch of a kernel with its original can run it
// (SMPART_DISABLE=1).
#include "cuda.h"

__device__ unsigned block_of() { return blockIdx.x; }

__global__ void visible(int *p) { p[threadIdx.x] = 1; }
static __global__ void internal(int *p) { p[threadIdx.x] = 2; }
__global__ void reads_block(int *p) { p[block_of()] = 3; }

void run(int *p) {
  visible<<<1, 32>>>(p);
  internal<<<1, 32>>>(p);
  reads_block<<<4, 32>>>(p);
}

// ALL: {{^}}__global__ void visible(int *p) { p[threadIdx.x] = 1; }
// EXT: {{^}}__global__ void visible(int *p) { p[threadIdx.x] = 1; }
// HDR-NOT: {{^}}__global__ void visible(int *p)
// CHECK: {{^}}__global__ void visible(smpart::LaunchControl smpart_ctl, int *p) {
// ALL: {{^}}static __global__ void internal(int *p) { p[threadIdx.x] = 2; }
// EXT-NOT: {{^}}static __global__ void internal(int *p)
// HDR-NOT: {{^}}static __global__ void internal(int *p)
// CHECK: {{^}}static __global__ void internal(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK-NOT: {{^}}__global__ void reads_block(int *p)
// CHECK: {{^}}__global__ void reads_block(smpart::LaunchControl smpart_ctl, int *p) {
// ALL: smpart::launchRewritten({"visible", {{.*}}, true}, 1, 32, 0, 0,
// ALL-SAME: if (smpart_p.{{original}}) visible<<<
// ALL: smpart::launchRewritten({"internal", {{.*}}, true}, 1, 32, 0, 0,
// ALL: smpart::launchRewritten({"reads_block", reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&reads_block))}, 4, 32, 0, 0,
// EXT: smpart::launchRewritten({"visible", {{.*}}, true}, 1, 32, 0, 0,
// EXT: smpart::launchRewritten({"internal", reinterpret_cast<const void *>(&internal)}, 1, 32, 0, 0,
// HDR: smpart::launchRewritten({"visible", reinterpret_cast<const void *>(&visible)}, 1, 32, 0, 0,
// HDR-NOT: {{if \(smpart_p[.]original\)}}
// BAD: Cannot find option named 'some'!
