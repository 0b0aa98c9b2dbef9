// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/once.cu -- %stubflags
// RUN: %smpart %t/once.cu -o %t/twice.cu -- %stubflags 2>&1 | FileCheck --check-prefix=NOTE %s
// RUN: cmp %t/once.cu %t/twice.cu
// The tool recognises its own output by the marker line and leaves it as is.
#include "cuda.h"

__global__ void k(int n, int *p) {
  if (threadIdx.x >= n) return;
  p[blockIdx.x] = 1;
}
void run(int *p) { k<<<1, 1>>>(1, p); }

// NOTE: {{^}}smpart-transform: note: '{{.*}}once.cu' is already transformed; left unchanged
