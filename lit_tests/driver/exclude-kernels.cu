// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart --keep-original=headers %s --exclude-kernels='^ns::skip' --manifest=%t/m.json -- %stubflags | FileCheck %s
// RUN: FileCheck --check-prefix=JSON %s < %t/m.json
// --exclude-kernels matches qualified names; an excluded kernel and its
// launch are unchanged and the manifest says "excluded".
#include "cuda.h"

namespace ns {
__global__ void skip(int *p) { p[0] = 1; }
__global__ void keep(int *p) { p[0] = 2; }
}
void run(int *p) {
  ns::skip<<<1, 1>>>(p);
  ns::keep<<<1, 1>>>(p);
}

// CHECK: {{^}}__global__ void skip(int *p) { p[0] = 1; }
// CHECK-NEXT: {{^}}__global__ void keep(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}  ns::skip<<<1, 1>>>(p);
// CHECK-NEXT: {{^}}  smpart::launchRewritten({"ns::keep"

// JSON: "name": "ns::skip",
// JSON: "status": "excluded",
// JSON: "name": "ns::keep",
// JSON: "status": "transformed",
