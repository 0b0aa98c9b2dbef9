// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --allow-empty --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A <<<>>> launch in a host function template is rewritten once, in the
// template's text. Its instantiations share the launch's callee with the
// pattern, and that is no use of the kernel's address; taking the address
// inside a template still refuses the kernel.
#include "cuda.h"

__global__ void agg(float *o) { o[threadIdx.x] = 1; }
template <typename T> void run(float *o) { agg<<<1, 32>>>(o); }
void go(float *o) {
  run<float>(o);
  run<int>(o);
}
// WARN-NOT: kernel 'agg' not transformed
// CHECK: {{^}}__global__ void agg(smpart::LaunchControl smpart_ctl, float *o) {
// CHECK: {{^}}template <typename T> void run(float *o) { smpart::launchRewritten({"agg",
// CHECK-SAME: agg<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...);
// CHECK-NOT: agg{{<<<}}1, 32

__global__ void escapes(float *o) { o[threadIdx.x] = 2; }
template <typename T> void *handle() { return (void *)escapes; }
void *take() { return handle<float>(); }
// WARN: {{^}}{{.*}}launch-in-function-template.cu:[[@LINE-3]]:17: warning: smpart: kernel 'escapes' not transformed: its address is taken at line [[@LINE-2]] for something other than a <<<>>> launch
// CHECK: {{^}}__global__ void escapes(float *o) {
