// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: %smpart -i %t/k.cu -- %stubflags | count 0
// RUN: FileCheck %s < %t/k.cu
// -i replaces the input with the rewritten file.
#include "cuda.h"

__global__ void k(int *p) { p[0] = 1; }

// CHECK: {{^}}// smpart-transform: rewritten from {{.*}}k.cu; edit that file instead
// CHECK: {{^}}__global__ void k(smpart::LaunchControl smpart_ctl, int *p) {
