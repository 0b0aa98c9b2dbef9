// RUN: %smpart %s -- %stubflags | FileCheck %s
// A pointer loaded from memory may point anywhere (shared, local): loads
// through it are left alone.
#include "cuda.h"

__global__ void indirect(float **table, float *y) {
  float *row = table[blockIdx.x];
  y[threadIdx.x] = row[threadIdx.x];
}

// The kernel is transformed; its loads are not.
// CHECK: {{^}}__global__ void indirect(smpart::LaunchControl smpart_ctl, float **table, float *y) {
// CHECK: {{^}}  float *row = table[blockIdx.x];
// CHECK-NEXT: {{^}}  y[threadIdx.x] = row[threadIdx.x];
