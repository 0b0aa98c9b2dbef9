// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// Stores and compound assignments are not rewritten: only the right-hand
// side's loads are.
#include "cuda.h"

__global__ void update(const float *x, float *y) {
  y[threadIdx.x] = 2.0f;
  y[threadIdx.x] += x[threadIdx.x];
  *y = 0.0f;
}

// The kernel is transformed; its stores are not.
// CHECK: {{^}}__global__ void update(smpart::LaunchControl smpart_ctl, const float *x, float *y) {
// CHECK: {{^}}  y[threadIdx.x] = 2.0f;
// CHECK-NEXT: {{^}}  y[threadIdx.x] += smpart::load(&x[threadIdx.x], true);
// CHECK-NEXT: {{^}}  *y = 0.0f;
