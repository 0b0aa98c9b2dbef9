// RUN: %smpart %s -- %stubflags | FileCheck %s
// A pointer whose address is taken can be changed unseen: loads through it
// are left alone.
#include "cuda.h"

__device__ void redirect(const float **p);

__global__ void escaped(const float *x, float *y) {
  const float *p = x;
  redirect(&p);
  y[threadIdx.x] = p[threadIdx.x];
}

// The kernel is transformed; its loads are not.
// CHECK: {{^}}__global__ void escaped(smpart::LaunchControl smpart_ctl, const float *x, float *y) {
// CHECK: {{^}}  y[threadIdx.x] = p[threadIdx.x];
