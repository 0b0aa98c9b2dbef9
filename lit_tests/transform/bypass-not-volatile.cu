// RUN: %smpart %s -- %stubflags | FileCheck %s
// Volatile loads must reach memory as written: they are left alone.
#include "cuda.h"

__global__ void poll(volatile int *flag, int *out) {
  out[threadIdx.x] = flag[0];
}

// The kernel is transformed; its loads are not.
// CHECK: {{^}}__global__ void poll(smpart::LaunchControl smpart_ctl, volatile int *flag, int *out) {
// CHECK: {{^}}  out[threadIdx.x] = flag[0];
