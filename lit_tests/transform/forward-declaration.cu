// RUN: %smpart %s -- %stubflags | FileCheck %s
// Every declaration of a kernel gets the control parameter, so that the
// forward declaration and the definition still declare one function.
#include "cuda.h"

__global__ void fill(int *p, int v);
__global__ void fill(int *p, int v);

__global__ void fill(int *p, int v) { p[threadIdx.x] = v; }

// CHECK: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v);
// CHECK-NEXT: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v);
// CHECK: {{^}}__global__ void fill(smpart::LaunchControl smpart_ctl, int *p, int v) {
// CHECK-NOT: {{^}}__global__ void fill(int *p, int v)
