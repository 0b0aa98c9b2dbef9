// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// RUN: %smpart %s -o %t.rdc.cu -- %stubflags -fgpu-rdc 2>&1 | FileCheck --check-prefix=RDC %s
// A call through a function pointer or to a virtual function is chosen at
// run time. Without separate compilation the module holds no other device
// code: a pointer can only reach a device function this file names other
// than as a callee (or a lambda made a pointer), a virtual call an
// override defined here, and smpart follows each of them as called:
// `pointer` reaches `row`, `dispatched` reaches Leaf::id and `viaLambda`
// its lambda, which read blockIdx, so they are rewritten and the kernels
// publish their logical block. Where the file takes the address of no
// function of the pointer's type, its target is not one smpart can see:
// `unknown` is refused. With -fgpu-rdc another translation unit may hold
// the target: refused too. A virtual function
// named with its class, of a final class or called on an object, is an
// ordinary call; so are calls through a local reference or const pointer
// bound to a function (followed where it is named), calls in a host-only
// branch of __host__ __device__ code, calls through a template argument
// (known where it is instantiated, here a function pointer for the host
// only) and calls never evaluated.
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
__global__ void unknown(float *p, float (*g)(float)) { p[0] = g(p[1]); }
__global__ void viaLambda(unsigned *p) {
  unsigned (*h)(int) = [](int v) { return blockIdx.z + v; };
  p[h(1)] = 1;
}
__global__ void named(unsigned *p, Base *b) { p[b->Base::id()] = 1; }
__global__ void finalCall(unsigned *p, Leaf *l) { p[l->id()] = 1; }

void (*onError)(int) = nullptr;
__host__ __device__ void check(int *p) {
#ifndef __CUDA_ARCH__
  onError(p[0]);
#endif
}
template <class F> __host__ __device__ int each(int v, F f) { return f(v); }
int twice(int v) { return 2 * v; }
void onHost(int v) { each(v, twice); }
__global__ void quiet(int *p, Base *b) {
  check(p);
  Base o;
  p[0] = each(p[1], [](int v) { return v + 1; }) + static_cast<int>(o.id());
  p[1] = sizeof(b->id()) + noexcept(b->id());
  using R = decltype(onError(0));
}
__device__ unsigned column() { return blockIdx.y; }
__global__ void bound(unsigned *p) {
  unsigned (&f)() = column;
  unsigned (*const g)() = &column;
  p[f() + (*g)()] = 1;
}

// WARN: {{^}}{{.*}}dispatched-calls.cu:36:63: warning: smpart: kernel 'unknown' not transformed: calls through a function pointer or a virtual function, whose target may read the physical blockIdx/gridDim (smpart cannot follow it to rewrite it)
// WARN-NOT: warning
// CHECK: {{^}}__device__ unsigned row() { return smpart::blockIdx().x; }
// CHECK: {{^}}  __device__ unsigned id() override { return smpart::blockIdx().x; }
// CHECK: {{^}}__global__ void pointer(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK: {{^}}__global__ void dispatched(smpart::LaunchControl smpart_ctl, unsigned *p, Base *b) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK: {{^}}__global__ void unknown(float *p, float (*g)(float)) { p[0] = g(p[1]); }
// CHECK: {{^}}__global__ void viaLambda(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK: smpart::blockIdx().z + v
// CHECK: {{^}}__global__ void named(smpart::LaunchControl smpart_ctl, unsigned *p, Base *b) {
// CHECK: {{^}}__global__ void finalCall(smpart::LaunchControl smpart_ctl, unsigned *p, Leaf *l) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK: {{^}}__global__ void quiet(smpart::LaunchControl smpart_ctl, int *p, Base *b) {
// CHECK: {{^}}__global__ void bound(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
// RDC: warning: smpart: kernel 'pointer' not transformed: calls through a function pointer or a virtual function, whose target may read the physical blockIdx/gridDim (smpart cannot follow it to rewrite it; with separate compilation (-rdc) it may be in another translation unit)
// RDC: warning: smpart: kernel 'dispatched' not transformed: calls through a function pointer
// RDC: warning: smpart: kernel 'unknown' not transformed: calls through a function pointer
// RDC: warning: smpart: kernel 'viaLambda' not transformed: calls through a function pointer
// RDC-NOT: 'named'
// RDC-NOT: 'finalCall'
// RDC-NOT: 'quiet'
// RDC-NOT: 'bound'
