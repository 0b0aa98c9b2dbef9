// RUN: %smpart %s -o %t.cu --manifest %t.json -- %stubflags 2>/dev/null
// RUN: FileCheck %s < %t.cu
// RUN: FileCheck --check-prefix=MANIFEST %s < %t.json
// RUN: %smpart --confine-refused=false %s -o %t.free.cu --manifest %t.free.json -- %stubflags 2>/dev/null
// RUN: FileCheck --check-prefix=FREE %s < %t.free.cu
// RUN: FileCheck --check-prefix=FREE-MANIFEST %s < %t.free.json
// A kernel the tool refuses still runs under the plan: each of its <<<>>>
// launches keeps kernel, grid, block, shared memory and arguments as
// written, and runs on the SMs of the kernel's partition through
// smpart::confined, which orders it with the launch's own stream. A kernel
// whose CTAs must all be resident at once (grid-wide sync), and a launch in
// a macro body that cannot be edited, run free on every SM; the manifest
// says which and why. The partition is named as CUDA names the kernel: an
// extern "C" kernel by its symbol, without its namespace.
#include "cuda.h"

extern "C" __global__ void plain_c(float *p) { p[threadIdx.x] = 1; }
__global__ void gsync(float *p) {
  p[threadIdx.x] = 1;
  cooperative_groups::this_grid().sync();
}
extern "C" __global__ void in_macro(float *p) { p[0] = 3; }
#define LAUNCH(k, p) k<<<1, 32>>>(p)

namespace ops {
extern "C" __global__ void scoped(float *p) { p[0] = 4; }
}

template <class T> void launchIn(T *p, cudaStream_t s) {
  plain_c<<<1, 32, 0, s>>>(p);
}
// CHECK: {{^}}  plain_c<<<1, 32, 0, smpart::confined("plain_c", s)>>>(p);

void run(float *p, cudaStream_t s) {
  plain_c<<<1, 32>>>(p);
  // CHECK: {{^}}  plain_c<<<1, 32, 0, smpart::confined("plain_c", 0)>>>(p);
  plain_c<<<2, 64, 128>>>(p);
  // CHECK: {{^}}  plain_c<<<2, 64, 128, smpart::confined("plain_c", 0)>>>(p);
  plain_c<<<dim3(1), dim3(32), 16, s>>>(p);
  // CHECK: {{^}}  plain_c<<<dim3(1), dim3(32), 16, smpart::confined("plain_c", s)>>>(p);
  ops::scoped<<<1, 1>>>(p);
  // CHECK: {{^}}  ops::scoped<<<1, 1, 0, smpart::confined("scoped", 0)>>>(p);
  gsync<<<1, 32>>>(p);
  // CHECK: {{^}}  gsync<<<1, 32>>>(p);
  LAUNCH(in_macro, p);
  // CHECK: {{^}}  LAUNCH(in_macro, p);
  launchIn(p, s);
}

// MANIFEST:      "name": "plain_c",
// MANIFEST:      "status": "refused",
// MANIFEST:      "confinement": "confined",
// MANIFEST:      "name": "gsync",
// MANIFEST:      "status": "refused",
// MANIFEST:      "confinement": "free",
// MANIFEST-NEXT: "free_because": "it synchronises its whole grid, whose CTAs must all be resident at once: a partition smaller than the GPU may not hold them",
// MANIFEST:      "name": "in_macro",
// MANIFEST:      "confinement": "free",
// MANIFEST-NEXT: "free_because": "its launch at line {{[0-9]+}} cannot be edited (a macro body or spelled across files)",

// FREE:      {{^}}  plain_c<<<1, 32>>>(p);
// FREE: {{^}}  plain_c<<<2, 64, 128>>>(p);
// FREE-MANIFEST: "confinement": "free",
// FREE-MANIFEST-NEXT: "free_because": "--confine-refused=false",
