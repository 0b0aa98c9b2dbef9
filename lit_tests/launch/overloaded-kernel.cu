// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// An overloaded kernel's address names the overload the launch resolved
// to, through a static_cast to its new signature.
#include "cuda.h"

__global__ void clear(int *p) {}
__global__ void clear(float *p) {}

void run(int *i, float *f) {
  clear<<<1, 1>>>(i);
  clear<<<1, 1>>>(f);
}

// CHECK: {{^}}  smpart::launchRewritten({"clear", reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int *)>(&clear))}, 1, 1, 0, 0,
// CHECK-NEXT: {{^}}  smpart::launchRewritten({"clear", reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, float *)>(&clear))}, 1, 1, 0, 0,
