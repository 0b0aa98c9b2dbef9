// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// A grid-wide sync needs every physical CTA resident at once, which the
// persistent form does not give: the kernel and its launch are left as
// they were, byte for byte.
#include "cuda.h"

__global__ void twoPhase(int *p) {
  p[threadIdx.x] = 1;
  cooperative_groups::this_grid().sync();
  p[threadIdx.x] += 1;
}
// WARN: {{^}}{{.*}}grid-sync.cu:[[@LINE-3]]:3: warning: smpart: kernel 'twoPhase' not transformed: grid-wide synchronisation (grid_group::sync)

void run(int *p) { twoPhase<<<4, 32>>>(p); }
