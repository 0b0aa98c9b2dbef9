// RUN: %smpart %s -- %stubflags | FileCheck %s
// RUN: %smpart %s --keep-original=headers -- %stubflags | FileCheck --check-prefix=ALONE %s
// __launch_bounds__(T, M) caps registers for M blocks of T threads; ptxas
// also reads M as a budget to fill, and the persistent form would take
// every register the cap allows. The rewritten kernel states the same cap
// as one block of M x T threads (T rounded up to a warp) wherever that is
// a block CUDA launches, and its launches carry T for the runtime's check.
#include "cuda.h"

__global__ void __launch_bounds__(256, 2) bounded(float *y) {
  y[threadIdx.x] = 0;
}
// CHECK: {{^}}__global__ void __launch_bounds__(512) bounded(smpart::LaunchControl smpart_ctl, float *y) {

// Not a multiple of a warp: the cap is per warp.
__global__ void __launch_bounds__(48, 2) odd(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(128) odd(smpart::LaunchControl smpart_ctl, float *y) {

// One block per SM is still a budget: dropped, T unchanged.
__global__ void __launch_bounds__(128, 1) single(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(128) single(smpart::LaunchControl smpart_ctl, float *y) {

// M x T over 1024 threads: no single block says it; left as written.
__global__ void __launch_bounds__(512, 3) wide(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(512, 3) wide(smpart::LaunchControl smpart_ctl, float *y) {

// Nothing to gain without M; a cluster bound is left as written.
__global__ void __launch_bounds__(256) plain(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(256) plain(smpart::LaunchControl smpart_ctl, float *y) {
__global__ void __launch_bounds__(256, 2, 4) clustered(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(256, 2, 4) clustered(smpart::LaunchControl smpart_ctl, float *y) {

// A declaration with its own bound is edited like the definition.
__global__ void __launch_bounds__(256, 2) declared(float *y);
// CHECK: {{^}}__global__ void __launch_bounds__(512) declared(smpart::LaunchControl smpart_ctl, float *y);
__global__ void __launch_bounds__(256, 2) declared(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(512) declared(smpart::LaunchControl smpart_ctl, float *y) {

// Dependent bounds: the same choice, made for each instance.
template <int B>
__global__ void __launch_bounds__(B, 2) tiled(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(((2) >= 1 && ((B) + 31) / 32 * 32 * (2) <= 1024) ? ((B) + 31) / 32 * 32 * (2) : (B), ((2) >= 1 && ((B) + 31) / 32 * 32 * (2) <= 1024) ? 0 : (2)) tiled(smpart::LaunchControl smpart_ctl, float *y) {

// Spelled in a macro's body: left as written.
#define BOUNDS __launch_bounds__(256, 2)
__global__ void BOUNDS in_macro(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void BOUNDS in_macro(smpart::LaunchControl smpart_ctl, float *y) {

void host(float *y) {
  bounded<<<1, 256>>>(y);
  tiled<512><<<1, 512>>>(y);
  tiled<1024><<<1, 1024>>>(y);
  single<<<1, 128>>>(y);
  wide<<<1, 512>>>(y);
}
// Launches of a kernel whose bound got wider carry the original's T.
// CHECK-LABEL: void host(float *y) {
// CHECK-NEXT: smpart::launchRewritten({"bounded", {{.*}}(&bounded)), true, 256}, 1, 256,
// CHECK-NEXT: smpart::launchRewritten({"tiled", {{.*}}(&tiled<512>)), true, 512}, 1, 512,
// CHECK-NEXT: smpart::launchRewritten({"tiled", {{[^}]*}}}, 1, 1024,
// CHECK-NEXT: smpart::launchRewritten({"single", {{[^}]*}}}, 1, 128,
// CHECK-NEXT: smpart::launchRewritten({"wide", {{[^}]*}}}, 1, 512,
// ALONE: smpart::launchRewritten({"bounded", {{.*}}(&bounded)), false, 256}, 1, 256,
