// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu
// RUN: not %smpart -i -o %t/out.cu %t/k.cu -- %stubflags 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not %smpart -i --output-dir %t/dir %t/k.cu -- %stubflags 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: cmp %s %t/k.cu
// -o, --output-dir and -i are different destinations: one at a time.
#include "cuda.h"
__global__ void k() {}

// ERR: {{^}}smpart-transform: error: -o, --output-dir and -i exclude each other
