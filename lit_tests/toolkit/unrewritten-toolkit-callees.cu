// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// Device code of the toolkit's headers is followed for reads of the
// physical block, except cooperative groups, whose generic thread_group
// reads gridDim only when it is a grid, which this_grid() makes (refused
// on its own): a kernel using a thread block through thread_group is
// transformed, one reading the block index through the toolkit is not.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__device__ int total(cg::thread_group g, int v) {
  g.sync();
  return static_cast<int>(g.size() + g.thread_rank()) + v;
}
__global__ void grouped(int *p) {
  p[threadIdx.x] = total(cg::this_thread_block(), 1);
}
__global__ void ranked(int *p) {
  p[threadIdx.x] = static_cast<int>(cg::this_thread_block().group_index().x);
}

// WARN-NOT: 'grouped'
// WARN: warning: smpart: kernel 'ranked' not transformed: thread_block::group_index reads the physical block index
// WARN-NOT: 'grouped'
// CHECK: {{^}}__global__ void grouped(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}__global__ void ranked(int *p) {
