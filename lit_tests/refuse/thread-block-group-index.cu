// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// thread_block::group_index() reads the physical blockIdx.
#include "cuda.h"

__global__ void indexed(unsigned *p) {
  p[threadIdx.x] = cooperative_groups::this_thread_block().group_index().x;
}
// WARN: {{^}}{{.*}}thread-block-group-index.cu:[[@LINE-2]]:20: warning: smpart: kernel 'indexed' not transformed: thread_block::group_index reads the physical block index
