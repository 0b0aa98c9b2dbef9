// RUN: %smpart %s -o %t.cu -- %stubflags -fgpu-rdc 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: cmp %s %t.cu
// A device-side launch (dynamic parallelism) refuses the parent; the child
// keeps its signature so that this launch still compiles, so it is refused
// too, and its host launch stays as written.
#include "cuda.h"

__global__ void child(int *p) { p[threadIdx.x] = 0; }
__global__ void parent(int *p) { child<<<1, 32>>>(p); }
// WARN-DAG: {{^}}{{.*}}device-side-launch.cu:[[@LINE-1]]:34: warning: smpart: kernel 'parent' not transformed: device-side kernel launch (dynamic parallelism)
// WARN-DAG: {{^}}{{.*}}device-side-launch.cu:[[@LINE-2]]:34: warning: smpart: kernel 'child' not transformed: launched from device code in 'parent' (dynamic parallelism)

void run(int *p) {
  parent<<<1, 1>>>(p);
  child<<<1, 32>>>(p);
}
