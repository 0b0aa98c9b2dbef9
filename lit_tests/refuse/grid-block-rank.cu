// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// grid_group::block_rank() is the physical rank, not the logical block.
#include "cuda.h"

__global__ void ranked(unsigned long long *p) {
  p[threadIdx.x] = cooperative_groups::this_grid().block_rank();
}
// WARN: {{^}}{{.*}}grid-block-rank.cu:[[@LINE-2]]:20: warning: smpart: kernel 'ranked' not transformed: grid_group::block_rank queries the physical grid
