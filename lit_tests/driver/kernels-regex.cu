// RUN: %smpart %s --kernels='^only' -- %stubflags | FileCheck %s
// --kernels transforms only the kernels whose name matches; the others and
// their launches stay as written.
#include "cuda.h"

__global__ void onlyThis(int *p) { p[0] = 1; }
__global__ void notThat(int *p) { p[0] = 2; }
void run(int *p) {
  onlyThis<<<1, 1>>>(p);
  notThat<<<1, 1>>>(p);
}

// CHECK: {{^}}__global__ void onlyThis(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}__global__ void notThat(int *p) { p[0] = 2; }
// CHECK: {{^}}  smpart::launchRewritten({"onlyThis"
// CHECK-NEXT: {{^}}  notThat<<<1, 1>>>(p);

// RUN: %smpart %s --kernels='^typo' -o /dev/null --manifest=%t.json -- %stubflags 2>&1 | FileCheck --check-prefix=NONE %s
// RUN: FileCheck --check-prefix=JSON %s < %t.json
// A pattern that matches no kernel says so, and the manifest says why each
// kernel was left out.
// NONE: smpart-transform: note: --kernels='^typo' matches none of the 2 kernel(s) of '{{.*}}kernels-regex.cu'
// JSON: "status": "excluded",
// JSON-NEXT: "reasons": [
// JSON-NEXT: "not matched by --kernels"
