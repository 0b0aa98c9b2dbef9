// RUN: %smpart %s -- %stubflags | FileCheck %s
// A device function reached from a transformed kernel, directly or through
// another device function, reads the logical blockIdx/gridDim.
#include "cuda.h"

__device__ unsigned blockRow() { return blockIdx.y * gridDim.x; }
__device__ unsigned globalId() { return blockRow() + blockIdx.x; }

__global__ void ids(unsigned *out) { out[threadIdx.x] = globalId(); }

// CHECK: {{^}}__device__ unsigned blockRow() { return smpart::blockIdx().y * smpart::gridDim().x; }
// CHECK-NEXT: {{^}}__device__ unsigned globalId() { return blockRow() + smpart::blockIdx().x; }
// CHECK: {{^}}__global__ void ids(smpart::LaunchControl smpart_ctl, unsigned *out) {
// The kernel publishes each logical block for its device functions.
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {

// A constructor is a device function too.
struct Tile {
  unsigned first;
  __device__ Tile() : first(blockIdx.x * 64) {}
};
__global__ void tiled(unsigned *out) {
  Tile t;
  out[t.first + threadIdx.x] = 1;
}

// CHECK: {{^}}  __device__ Tile() : first(smpart::blockIdx().x * 64) {}
// CHECK: {{^}}__global__ void tiled(smpart::LaunchControl smpart_ctl, unsigned *out) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {

// So is a destructor, which runs where the local ends.
struct Mark {
  unsigned *out;
  __device__ ~Mark() { out[blockIdx.x] = 1; }
};
__global__ void marked(unsigned *out) { Mark m{out}; }

// CHECK: {{^}}  __device__ ~Mark() { out[smpart::blockIdx().x] = 1; }
// CHECK: {{^}}__global__ void marked(smpart::LaunchControl smpart_ctl, unsigned *out) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {

// A function passed on by name (to a template that calls it, through a
// pointer) is called through it: rewritten, and its block published.
__device__ unsigned column() { return blockIdx.x; }
template <class F> __device__ unsigned apply(F f) { return f(); }
__global__ void passed(unsigned *out) { out[apply(column)] = 1; }

// CHECK: {{^}}__device__ unsigned column() { return smpart::blockIdx().x; }
// CHECK: {{^}}__global__ void passed(smpart::LaunchControl smpart_ctl, unsigned *out) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
