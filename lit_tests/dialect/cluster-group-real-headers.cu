// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// The toolkit's cooperative_groups.h declares cluster_group and
// this_cluster() only for nvcc (__NVCC__) or on request
// (_CG_CLUSTER_INTRINSICS_AVAILABLE), which the parse makes, since clang
// has the cluster intrinsics they use. The file then parses on both sides;
// the cluster kernel is refused with its reason and the rest transformed.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) paired(float *p) {
  cg::cluster_group c = cg::this_cluster();
  // WARN-DAG: cluster-group-real-headers.cu:[[@LINE-1]]:25: warning: smpart: kernel 'paired' not transformed: cooperative_groups::this_cluster() spans a thread-block cluster
  p[c.block_rank()] = 1;
  c.sync();
}
// CHECK: __global__ void __cluster_dims__(2, 1, 1) paired(float *p) {

__global__ void plain(float *p) { p[blockIdx.x] = 2; }
// CHECK: __global__ void plain(smpart::LaunchControl smpart_ctl, float *p) {

void host(float *p) {
  paired<<<2, 32>>>(p);
  plain<<<1, 32>>>(p);
}
// CHECK: paired<<<2, 32>>>(p);
// CHECK: smpart::launchRewritten({"plain",
// WARN-NOT: error
