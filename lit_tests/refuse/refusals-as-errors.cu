// RUN: rm -rf %t && mkdir -p %t
// RUN: not %smpart %s --refusals-as-errors -o %t/out.cu -- %stubflags 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not test -e %t/out.cu
// With --refusals-as-errors a refusal is an error: exit 1, nothing written
// (even though another kernel could be transformed).
#include "cuda.h"

__global__ void fine(int *p) { p[0] = 1; }
__global__ void synced(int *p) { cooperative_groups::this_grid().sync(); }
// ERR: {{^}}{{.*}}refusals-as-errors.cu:[[@LINE-1]]:34: error: smpart: kernel 'synced' not transformed: grid-wide synchronisation (grid_group::sync)
// ERR-NOT: {{^}}{{.*}}: warning:
