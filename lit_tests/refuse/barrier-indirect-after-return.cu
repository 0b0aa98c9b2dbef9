// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// Synchronisation the analysis can only see by looking past a plain call,
// reachable after an early return: a call through a function pointer or a
// virtual call (a target runs a barrier, or none can be listed), inline
// asm that executes a barrier or a warp-synchronous instruction (in the
// kernel or in a function it calls), a constructor whose body runs
// __syncthreads(), and a call through a reference bound to a function.
// Each kernel is refused with notes at the return and at the statement.
#include "cuda.h"

typedef void (*stage_t)(float *);
__device__ void stage(float *p) { __syncthreads(); p[threadIdx.x] += 1; }
__device__ stage_t stages[1] = {stage};

__global__ void via_pointer(float *p, int n) {
  if (threadIdx.x >= n)
    return;
  stages[0](p);
}
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-5]]:17: warning: smpart: kernel 'via_pointer' not transformed: barrier at line [[@LINE-2]] is reachable after the early return at line [[@LINE-3]]
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-3]]:3: note: indirect call here, which may synchronise the block

struct Stage {
  __device__ virtual void run(float *p) = 0;
};
__global__ void via_virtual(Stage *s, float *p, int n) {
  if (threadIdx.x >= n)
    return;
  s->run(p);
}
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-5]]:17: warning: smpart: kernel 'via_virtual' not transformed: barrier at line [[@LINE-2]]
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-3]]:3: note: virtual call of 'Stage::run' here, which may synchronise the block

__global__ void asm_barrier(float *p, int n) {
  if (threadIdx.x >= n)
    return;
  asm volatile("bar.sync 0;");
  p[threadIdx.x] = 1;
}
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-6]]:17: warning: smpart: kernel 'asm_barrier' not transformed: barrier at line [[@LINE-3]] is reachable after the early return at line [[@LINE-4]]
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-4]]:3: note: inline asm barrier here

__device__ int lane_sum(int v) {
  asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 31, -1;" : "+r"(v));
  return v;
}
__global__ void asm_shuffle_in_callee(int *p, int n) {
  if (threadIdx.x >= n)
    return;
  p[threadIdx.x] = lane_sum(p[threadIdx.x]);
}
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-5]]:17: warning: smpart: kernel 'asm_shuffle_in_callee' not transformed: warp collective at line [[@LINE-2]]
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-3]]:20: note: call of 'lane_sum', which runs a warp collective

struct BlockScope {
  __device__ BlockScope() { __syncthreads(); }
};
__global__ void ctor_barrier(float *p, int n) {
  if (threadIdx.x >= n)
    return;
  BlockScope scope;
  p[threadIdx.x] = 1;
}
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-6]]:17: warning: smpart: kernel 'ctor_barrier' not transformed: barrier at line [[@LINE-3]]

__device__ void sync_all() { __syncthreads(); }
__global__ void via_reference(float *p, int n) {
  void (&s)() = sync_all;
  if (threadIdx.x >= n)
    return;
  s();
}
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-6]]:17: warning: smpart: kernel 'via_reference' not transformed: barrier at line [[@LINE-2]] is reachable after the early return at line [[@LINE-3]]
// WARN-DAG: {{^}}{{.*}}barrier-indirect-after-return.cu:[[@LINE-3]]:3: note: call of 'sync_all', which may synchronise the block

// Direct calls of functions without collectives, asm that does not
// synchronise, and (without separate compilation, where smpart lists what a
// pointer may reach) a call through a pointer to such functions stay
// transformable.
__device__ float twice(float x) { return 2 * x; }
__global__ void plain(float *p, int n) {
  if (threadIdx.x >= n)
    return;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  p[threadIdx.x] = twice(p[threadIdx.x]) + lane;
}
// WARN-NOT: kernel 'plain' not transformed
typedef float (*scale_t)(float);
__device__ float half(float x) { return x / 2; }
__device__ scale_t scales[2] = {twice, half};
__global__ void plain_pointer(float *p, int n) {
  if (threadIdx.x >= n)
    return;
  p[threadIdx.x] = scales[n & 1](p[threadIdx.x]);
}
// WARN-NOT: kernel 'plain_pointer' not transformed

// CHECK: {{^}}__global__ void via_pointer(float *p, int n) {
// CHECK: {{^}}__global__ void via_virtual(Stage *s, float *p, int n) {
// CHECK: {{^}}__global__ void asm_barrier(float *p, int n) {
// CHECK: {{^}}__global__ void asm_shuffle_in_callee(int *p, int n) {
// CHECK: {{^}}__global__ void ctor_barrier(float *p, int n) {
// CHECK: {{^}}__global__ void via_reference(float *p, int n) {
// CHECK: {{^}}__global__ void plain(smpart::LaunchControl smpart_ctl, float *p, int n) {
// CHECK: {{^}}__global__ void plain_pointer(smpart::LaunchControl smpart_ctl, float *p, int n) {
