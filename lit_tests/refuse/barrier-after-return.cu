// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// A __syncthreads() reachable after an early return: threads that left the
// logical block would meet the others at a different barrier. The kernel
// is refused with a warning at the kernel and notes at both lines.
#include "cuda.h"

__global__ void hazard(int n, int *p) {
  int i = threadIdx.x;
  if (i >= n)
    return;
  p[i] = 1;
  __syncthreads();
  p[i] += p[(i + 1) % n];
}
// WARN: {{^}}{{.*}}barrier-after-return.cu:[[@LINE-8]]:17: warning: smpart: kernel 'hazard' not transformed: barrier at line [[@LINE-3]] is reachable after the early return at line [[@LINE-5]] (threads that returned would wait at a different barrier)
// WARN-NEXT: {{^}}{{.*}}barrier-after-return.cu:[[@LINE-6]]:5: note: early return here
// WARN-NEXT: {{^}}{{.*}}barrier-after-return.cu:[[@LINE-5]]:3: note: barrier here
