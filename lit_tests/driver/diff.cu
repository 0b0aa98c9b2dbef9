// RUN: cp %s %t.cu
// RUN: %smpart --diff %t.cu -- %stubflags | FileCheck %s
// RUN: cmp %s %t.cu
// A dry run: a unified diff on stdout, the file untouched.
#include "cuda.h"

__global__ void k(int *p) { p[0] = 1; }

// CHECK: --- {{.*}}.cu
// CHECK-NEXT: +++ {{.*}}.cu (smpart)
// CHECK-NEXT: @@ -1,{{[0-9]+}} +1,{{[0-9]+}} @@
// CHECK-NEXT: +// smpart-transform: rewritten from
// CHECK: +__global__ void k(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: -__global__ void k(int *p) { p[0] = 1; }
