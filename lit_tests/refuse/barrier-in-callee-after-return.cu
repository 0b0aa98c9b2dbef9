// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// The barrier analysis follows calls (transitively): a device function that
// runs __syncthreads(), called after an early return, is the n-body case.
// A device function the file has no body for may synchronise too. A callee
// that runs no collective, and CUDA's own bodiless functions, are fine.
#include "cuda.h"

__device__ void tile_barrier() { __syncthreads(); }
__device__ void load_tile(float *s, const float *g) {
  s[threadIdx.x] = g[threadIdx.x];
  tile_barrier();
}

__global__ void forces(int n, const float *g, float *out) {
  __shared__ float s[256];
  if (threadIdx.x >= n)
    return;
  load_tile(s, g);
  out[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
// WARN: {{^}}{{.*}}barrier-in-callee-after-return.cu:[[@LINE-7]]:17: warning: smpart: kernel 'forces' not transformed: barrier at line [[@LINE-3]] is reachable after the early return at line [[@LINE-4]] (threads that returned would wait at a different barrier)
// WARN-NEXT: {{^}}{{.*}}barrier-in-callee-after-return.cu:[[@LINE-5]]:5: note: early return here
// WARN-NEXT: {{^}}{{.*}}barrier-in-callee-after-return.cu:[[@LINE-5]]:3: note: call of 'load_tile', which may synchronise the block (a barrier inside it, or no body to look into)

__device__ float external_step(float);
__global__ void unknown(int n, float *out) {
  if (threadIdx.x >= n)
    return;
  out[threadIdx.x] = external_step(out[threadIdx.x]);
}
// WARN: {{^}}{{.*}}barrier-in-callee-after-return.cu:[[@LINE-5]]:17: warning: smpart: kernel 'unknown' not transformed: barrier at line [[@LINE-2]]

__device__ float square(float x) { return x * x; }
__global__ void plain(int n, float *out) {
  if (threadIdx.x >= n)
    return;
  out[threadIdx.x] = sqrtf(square(out[threadIdx.x]));
}
// WARN-NOT: kernel 'plain' not transformed
// CHECK: {{^}}__global__ void forces(int n, const float *g, float *out) {
// CHECK: {{^}}__global__ void unknown(int n, float *out) {
// CHECK: {{^}}__global__ void plain(smpart::LaunchControl smpart_ctl, int n, float *out) {
