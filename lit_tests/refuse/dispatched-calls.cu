// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A call through a function pointer or to a virtual function may reach a
// function that reads the physical blockIdx, which smpart cannot follow
// to rewrite: the kernel is refused. A virtual function named with its
// class, or of a final class, is an ordinary call.
#include "cuda.h"

__device__ unsigned row() { return blockIdx.x; }
struct Base {
  __device__ virtual unsigned id() { return 0; }
};
struct Leaf final : Base {
  __device__ unsigned id() override { return blockIdx.x; }
};

__global__ void pointer(unsigned *p) {
  unsigned (*f)() = row;
  p[f()] = 1;
}
__global__ void dispatched(unsigned *p, Base *b) { p[b->id()] = 1; }
__global__ void named(unsigned *p, Base *b) { p[b->Base::id()] = 1; }
__global__ void finalCall(unsigned *p, Leaf *l) { p[l->id()] = 1; }

// WARN: {{^}}{{.*}}dispatched-calls.cu:19:5: warning: smpart: kernel 'pointer' not transformed: calls through a function pointer or a virtual function, whose target may read the physical blockIdx/gridDim (smpart cannot follow it to rewrite it)
// WARN: {{^}}{{.*}}dispatched-calls.cu:21:54: warning: smpart: kernel 'dispatched' not transformed: calls through a function pointer
// WARN-NOT: 'named'
// WARN-NOT: 'finalCall'
// CHECK: {{^}}__global__ void named(smpart::LaunchControl smpart_ctl, unsigned *p, Base *b) {
// CHECK: {{^}}__global__ void finalCall(smpart::LaunchControl smpart_ctl, unsigned *p, Leaf *l) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
