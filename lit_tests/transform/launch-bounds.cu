// RUN: %smpart %s -- %stubflags | FileCheck %s
// __launch_bounds__ stays on the kernel: each physical CTA is still a
// block of at most that many threads.
#include "cuda.h"

__global__ void __launch_bounds__(256, 2) bounded(float *y) {
  y[threadIdx.x] = 0;
}

// CHECK: {{^}}__global__ void __launch_bounds__(256, 2) bounded(smpart::LaunchControl smpart_ctl, float *y) {
