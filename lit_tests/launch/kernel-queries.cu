// RUN: %smpart %s -- %stubflags | FileCheck %s
// Kernel queries and settings name the rewritten kernel, which runs and
// whose attributes occupancy needs; beside the kept original the bare name
// would be an ambiguous overload set. Other uses are left alone.
#include "cuda.h"

extern "C" int cudaFuncSetAttribute(const void *func, int attr, int value);
extern "C" int cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int *blocks, const void *func, int threads, unsigned long smem);

namespace ops {
__global__ void scale(float *y, int n) { y[threadIdx.x] *= n; }
}
template <class T> __global__ void fill(T *p) { p[threadIdx.x] = T(1); }

void run(float *y, int n) {
  int blocks = 0;
  cudaFuncSetAttribute((const void *)ops::scale, 8, 1024);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)&fill<float>, 128, 0);
  ops::scale<<<blocks, 128>>>(y, n);
}
// CHECK: {{^}}  cudaFuncSetAttribute((const void *)smpart::rewritten(ops::scale), 8, 1024);
// CHECK-NEXT: {{^}}  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)smpart::rewritten(&fill<float>), 128, 0);
// CHECK-NEXT: {{^}}  smpart::launchRewritten({"ops::scale", reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, float *, int)>(&ops::scale)), true}, blocks, 128, 0, 0,
