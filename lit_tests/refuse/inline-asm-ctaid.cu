// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// Inline asm that reads %ctaid sees the physical block, which smpart cannot
// redirect.
#include "cuda.h"

__global__ void raw(unsigned *p) {
  unsigned c;
  asm("mov.u32 %0, %%ctaid.x;" : "=r"(c));
  p[threadIdx.x] = c;
}
// WARN: {{^}}{{.*}}inline-asm-ctaid.cu:[[@LINE-3]]:3: warning: smpart: kernel 'raw' not transformed: inline asm reads %ctaid/%nctaid
