// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// nvcc's intrinsics that clang's wrapper lacks (the store cache hints
// __stcs, __stcg, ...) are declared without bodies by the compatibility
// header the tool pre-includes. Like the toolkit's own bodiless functions
// they do not synchronise: a call after an early return is fine. A barrier,
// or a device function the file has no body for, still refuses the kernel.
#include <cuda_runtime.h>

__global__ void streaming(float *o, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __stcs(o + i, in[i]);
  __stcg(o + i, __ldcs(in + i));
}
// WARN-NOT: kernel 'streaming' not transformed

__device__ float external_step(float);
__global__ void unknown(float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __stcs(o + i, external_step(o[i]));
}
// WARN: {{^}}{{.*}}toolkit-intrinsic-after-return.cu:[[@LINE-5]]:17: warning: smpart: kernel 'unknown' not transformed: barrier at line [[@LINE-2]] is reachable after the early return at line [[@LINE-3]]
// WARN: note: call of 'external_step', which may synchronise the block

__global__ void barrier(float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __syncthreads();
  __stcs(o + i, 0.0f);
}
// WARN: {{^}}{{.*}}toolkit-intrinsic-after-return.cu:[[@LINE-6]]:17: warning: smpart: kernel 'barrier' not transformed: barrier at line [[@LINE-3]] is reachable after the early return at line [[@LINE-4]]

void run(float *o, const float *in, int n) {
  streaming<<<(n + 255) / 256, 256>>>(o, in, n);
  unknown<<<(n + 255) / 256, 256>>>(o, n);
  barrier<<<(n + 255) / 256, 256>>>(o, n);
}
// CHECK: {{^}}__global__ void streaming(smpart::LaunchControl smpart_ctl, float *o, const float *in, int n) {
// CHECK: {{^}}__global__ void unknown(float *o, int n) {
// CHECK: {{^}}__global__ void barrier(float *o, int n) {
