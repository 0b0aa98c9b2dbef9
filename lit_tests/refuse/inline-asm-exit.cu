// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// `exit` in inline asm ends the thread for good; in the persistent form the
// rest of the CTA would wait for it at the loop's barrier forever.
#include "cuda.h"

__global__ void bail(int n, int *p) {
  if (threadIdx.x >= n)
    asm volatile("exit;");
  p[threadIdx.x] = 1;
}
// WARN: {{^}}{{.*}}inline-asm-exit.cu:[[@LINE-3]]:5: warning: smpart: kernel 'bail' not transformed: inline asm executes `exit` (the thread would leave the persistent loop)
