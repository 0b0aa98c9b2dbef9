// RUN: %smpart %s -- %stubflags | FileCheck %s
// The control block becomes the first parameter of every kernel: before
// existing parameters, as the only one of `()`, and in place of `(void)`.
#include "cuda.h"

__global__ void withParams(int n, float *y) { y[n] = 0; }
__global__ void noParams() {}
__global__ void voidParams(void) {}

// CHECK: {{^}}__global__ void withParams(smpart::LaunchControl smpart_ctl, int n, float *y) {
// CHECK: {{^}}__global__ void noParams(smpart::LaunchControl smpart_ctl) {
// CHECK: {{^}}__global__ void voidParams(smpart::LaunchControl smpart_ctl) {
// CHECK-NOT: {{^}}__global__ void voidParams(void)
