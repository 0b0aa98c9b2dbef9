// RUN: %smpart %s -- %stubflags | FileCheck %s
// Default arguments stay on their parameters; the control block, first,
// needs none.
#include "cuda.h"

__global__ void step(float *y, float by = 1.0f, int n = 32) {
  y[threadIdx.x % n] += by;
}

// CHECK: {{^}}__global__ void step(smpart::LaunchControl smpart_ctl, float *y, float by = 1.0f, int n = 32) {
