// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// Thread-block clusters: the hardware co-schedules the CTAs of a cluster
// and exposes their ranks and distributed shared memory, which the
// persistent form (CTAs leaving and joining, logical blocks remapped) would
// break.
#include "cuda.h"

__global__ void __cluster_dims__(2, 1, 1) paired(int *p) {
  p[threadIdx.x] = 1;
}
// WARN-DAG: {{^}}{{.*}}thread-block-cluster.cu:[[@LINE-3]]:{{[0-9]+}}: warning: smpart: kernel 'paired' not transformed: thread-block cluster (__cluster_dims__)

namespace cg = cooperative_groups;
__global__ void ranks(int *p) {
  cg::cluster_group c = cg::this_cluster();
  p[threadIdx.x] = c.block_rank();
}
// WARN-DAG: {{^}}{{.*}}thread-block-cluster.cu:[[@LINE-3]]:25: warning: smpart: kernel 'ranks' not transformed: cooperative_groups::this_cluster() spans a thread-block cluster
