// RUN: %smpart %s -- %stubflags | FileCheck %s
// A load through a `const T *__restrict__` parameter (read-only for the
// whole kernel) goes through smpart::load_ro, which keeps ld.global.nc;
// without __restrict__, or without const, it is smpart::load.
#include "cuda.h"

__global__ void mix(const float *__restrict__ ro, const float *shared,
                    float *__restrict__ rw, int n) {
  rw[threadIdx.x] = ro[threadIdx.x] + *(ro + n - 1) + shared[threadIdx.x] +
                    rw[threadIdx.x + 1];
}

// CHECK: {{^}}__global__ void mix(smpart::LaunchControl smpart_ctl, const float *__restrict__ ro, const float *shared,
// CHECK: {{^}}  rw[threadIdx.x] = smpart::load_ro(&ro[threadIdx.x], true) + smpart::load_ro(&*(ro + n - 1), true) + smpart::load(&shared[threadIdx.x], true) +
// CHECK-NEXT: {{^}}                    smpart::load(&rw[threadIdx.x + 1], true);
