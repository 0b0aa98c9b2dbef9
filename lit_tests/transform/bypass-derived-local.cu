// RUN: %smpart %s -- %stubflags | FileCheck %s
// Locals derived from a parameter (`p + k`, `&x[i]`, pointer increments)
// point to global memory too.
#include "cuda.h"

__global__ void derived(const float *x, float *y) {
  const float *row = x + 64;
  const float *elem = &x[threadIdx.x];
  const float *walk = x;
  ++walk;
  y[threadIdx.x] = row[threadIdx.x] + *elem + *walk;
}

// CHECK: {{^}}  y[threadIdx.x] = smpart::load(&row[threadIdx.x], true) + smpart::load(&*elem, true) + smpart::load(&*walk, true);
