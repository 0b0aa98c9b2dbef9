// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --allow-empty --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// RUN: %smpart %s -o %t.rdc.cu -- %stubflags -fgpu-rdc 2>&1 | FileCheck --check-prefix=RDC %s
// What a call chosen at run time may reach, without separate compilation:
// a function whose address the file takes through an object (a static
// member), one with an attribute its pointer type lacks (noreturn), one
// cast to another pointer type, a generic lambda made a pointer, and every
// destructor a virtual destructor may run (of each derived class, its
// members' too, implicit or not, and its class's operator delete) for
// `delete` and an explicit call, and a class's operator new. Each
// reads blockIdx: it is rewritten and every kernel publishes its logical
// block. A local's destructor runs its members' destructors too, and so
// does each element's of a local array. With -fgpu-rdc the dispatching
// kernels are refused.
#include "cuda.h"

typedef unsigned (*Index)();
__device__ unsigned zero() { return 0; }
struct Rows {
  __device__ static unsigned row() { return blockIdx.x; }
};
__device__ Rows rows;
__device__ Index byObject[2] = {zero, rows.row};
__global__ void staticMember(unsigned *p, int i) { p[byObject[i]()] = 1; }

typedef void (*Fail)(unsigned *);
__device__ void pass(unsigned *) {}
__device__ __attribute__((noreturn)) void fail(unsigned *p) {
  p[0] = blockIdx.y;
  __builtin_trap();
}
__device__ Fail onError[2] = {pass, fail};
__global__ void noReturn(unsigned *p, int i) { onError[i](p); }

typedef void (*Mark)(float *);
__device__ void clear(float *p) { p[threadIdx.x] = 0; }
__device__ void stamp(const float *p) {
  const_cast<float *>(p)[threadIdx.x] = blockIdx.z;
}
__device__ Mark marks[2] = {clear, (Mark)stamp};
__global__ void castPointer(float *p, int i) { marks[i](p); }

__global__ void genericLambda(unsigned *p, int i) {
  unsigned (*table[2])(unsigned) = {
      [](unsigned v) { return v; }, [](auto v) { return gridDim.x + v; }};
  p[table[i](1)] = 1;
}

struct Tag {
  unsigned *out;
  __device__ ~Tag() { out[threadIdx.x] = blockIdx.x; }
};
struct Shape {
  __device__ virtual ~Shape() {}
};
struct Tagged : Shape {
  Tag tag;
};
__global__ void deleteVirtual(Shape **s) { delete *s; }
__global__ void destroyVirtual(Shape **s) { (*s)->~Shape(); }
__global__ void localMembers(unsigned *p) {
  Tagged t;
  t.tag.out = p;
}
__device__ char arena[64][256];
struct Pooled : Shape {
  __device__ static void *operator new(size_t n) {
    return arena[blockIdx.x] + n;
  }
  __device__ static void operator delete(void *) { arena[blockIdx.y][0] = 0; }
};
__global__ void makePooled(Shape **s) { *s = new Pooled; }
__global__ void localArray(unsigned *p) {
  Tag tags[2];
  tags[0].out = tags[1].out = p;
}

// WARN-NOT: warning
// CHECK: {{^}}  __device__ static unsigned row() { return smpart::blockIdx().x; }
// CHECK: {{^}}__global__ void staticMember(smpart::LaunchControl smpart_ctl, unsigned *p, int i) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: p[0] = smpart::blockIdx().y;
// CHECK: {{^}}__global__ void noReturn(smpart::LaunchControl smpart_ctl, unsigned *p, int i) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: const_cast<float *>(p)[threadIdx.x] = smpart::blockIdx().z;
// CHECK: {{^}}__global__ void castPointer(smpart::LaunchControl smpart_ctl, float *p, int i) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: {{^}}__global__ void genericLambda(smpart::LaunchControl smpart_ctl, unsigned *p, int i) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: return smpart::gridDim().x + v;
// CHECK: __device__ ~Tag() { out[threadIdx.x] = smpart::blockIdx().x; }
// CHECK: {{^}}__global__ void deleteVirtual(smpart::LaunchControl smpart_ctl, Shape **s) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: {{^}}__global__ void destroyVirtual(smpart::LaunchControl smpart_ctl, Shape **s) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: {{^}}__global__ void localMembers(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: return arena[smpart::blockIdx().x] + n;
// CHECK: arena[smpart::blockIdx().y][0] = 0;
// CHECK: {{^}}__global__ void makePooled(smpart::LaunchControl smpart_ctl, Shape **s) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta
// CHECK: {{^}}__global__ void localArray(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK-NEXT: // smpart:
// CHECK-NEXT: for (smpart::detail::PublishingCta

// RDC: warning: smpart: kernel 'staticMember' not transformed: calls through a function pointer
// RDC: warning: smpart: kernel 'noReturn' not transformed: calls through a function pointer
// RDC: warning: smpart: kernel 'castPointer' not transformed: calls through a function pointer
// RDC: warning: smpart: kernel 'genericLambda' not transformed: calls through a function pointer
// RDC: warning: smpart: kernel 'deleteVirtual' not transformed: deletes an object through a virtual destructor, whose override may read the physical blockIdx/gridDim (smpart cannot follow it to rewrite it; with separate compilation (-rdc) it may be in another translation unit)
// RDC: warning: smpart: kernel 'destroyVirtual' not transformed: destroys an object through a virtual destructor
// RDC-NOT: 'localMembers'
// RDC-NOT: 'localArray'
