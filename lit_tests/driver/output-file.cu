// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu -- %stubflags | count 0
// RUN: FileCheck %s < %t/out.cu
// -o writes the rewritten file there, and nothing to stdout.
#include "cuda.h"

__global__ void k(int *p) { p[0] = 1; }

// CHECK: {{^}}// smpart-transform: rewritten from {{.*}}output-file.cu; edit that file instead
// CHECK: {{^}}__global__ void k(smpart::LaunchControl smpart_ctl, int *p) {
