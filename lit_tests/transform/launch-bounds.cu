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

// Bounds that are not literals (a template parameter, a constant, a macro
// that may depend on __CUDA_ARCH__): the same choice, made by nvcc for
// each instance and architecture.
template <int B>
__global__ void __launch_bounds__(B, 2) tiled(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(((2) >= 1 && ((B) + 31) / 32 * 32 * (2) <= 1024) ? ((B) + 31) / 32 * 32 * (2) : (B), ((2) >= 1 && ((B) + 31) / 32 * 32 * (2) <= 1024) ? 0 : (2)) tiled(smpart::LaunchControl smpart_ctl, float *y) {
constexpr int kThreads = 128;
__global__ void __launch_bounds__(kThreads, 2) named(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(((2) >= 1 && ((kThreads) + 31) / 32 * 32 * (2) <= 1024) ? ((kThreads) + 31) / 32 * 32 * (2) : (kThreads), ((2) >= 1 && ((kThreads) + 31) / 32 * 32 * (2) <= 1024) ? 0 : (2)) named(smpart::LaunchControl smpart_ctl, float *y) {

// Arguments that expand macros of their own are taken as written between
// the parentheses; launches carry no T from a macro.
#define BLOCKS_PER_SM 2
#define THREADS 128
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM) macros(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(((BLOCKS_PER_SM) >= 1 && ((THREADS) + 31) / 32 * 32 * (BLOCKS_PER_SM) <= 1024) ? ((THREADS) + 31) / 32 * 32 * (BLOCKS_PER_SM) : (THREADS), ((BLOCKS_PER_SM) >= 1 && ((THREADS) + 31) / 32 * 32 * (BLOCKS_PER_SM) <= 1024) ? 0 : (BLOCKS_PER_SM)) macros(smpart::LaunchControl smpart_ctl, float *y) {
__global__ void __launch_bounds__(256, BLOCKS_PER_SM, 2) clustered_macro(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(256, BLOCKS_PER_SM, 2) clustered_macro(smpart::LaunchControl smpart_ctl, float *y) {

// A declaration that inherits the bound is left alone; one of two
// declarations spelled in a macro's body leaves both as written.
__global__ void __launch_bounds__(256, 2) inherits(float *y);
__global__ void inherits(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(512) inherits(smpart::LaunchControl smpart_ctl, float *y);
// CHECK: {{^}}__global__ void inherits(smpart::LaunchControl smpart_ctl, float *y) {
#define HALF_BOUNDS __launch_bounds__(256, 2)
__global__ void HALF_BOUNDS mixed(float *y);
__global__ void __launch_bounds__(256, 2) mixed(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void HALF_BOUNDS mixed(smpart::LaunchControl smpart_ctl, float *y);
// CHECK: {{^}}__global__ void __launch_bounds__(256, 2) mixed(smpart::LaunchControl smpart_ctl, float *y) {

// A query that answers with the largest block would ask the rewritten
// kernel, and a program may choose its blocks by it: left as written. A
// query that does not, keeps nothing.
extern "C" int cudaFuncGetAttributes(void *attr, const void *func);
extern "C" int cudaFuncSetAttribute(const void *func, int attr, int value);
__global__ void __launch_bounds__(256, 2) queried(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(256, 2) queried(smpart::LaunchControl smpart_ctl, float *y) {
__global__ void __launch_bounds__(256, 2) configured(float *y) { y[0] = 0; }
// CHECK: {{^}}__global__ void __launch_bounds__(512) configured(smpart::LaunchControl smpart_ctl, float *y) {
void query(void *attr) {
  cudaFuncGetAttributes(attr, (const void *)queried);
  cudaFuncSetAttribute((const void *)configured, 8, 1024);
}

// Spelled in a macro's body: left as written.
#define BOUNDS __launch_bounds__(256, 2)
__global__ void BOUNDS in_macro(float *y) { y[threadIdx.x] = 0; }
// CHECK: {{^}}__global__ void BOUNDS in_macro(smpart::LaunchControl smpart_ctl, float *y) {

void host(float *y) {
  bounded<<<1, 256>>>(y);
  tiled<512><<<1, 512>>>(y);
  tiled<1024><<<1, 1024>>>(y);
  wide<<<1, 512>>>(y);
  named<<<1, 128>>>(y);
  macros<<<1, 128>>>(y);
  clustered<<<1, 256>>>(y);
  plain<<<1, 256>>>(y);
}
// Launches carry the original's T wherever it is a literal or a template
// argument and M is written, whether or not the bound got wider (CUDA
// refuses the same blocks where it did not).
// CHECK-LABEL: void host(float *y) {
// CHECK-NEXT: smpart::launchRewritten({"bounded", {{.*}}(&bounded)), true, 256}, 1, 256,
// CHECK-NEXT: smpart::launchRewritten({"tiled", {{.*}}(&tiled<512>)), true, 512}, 1, 512,
// CHECK-NEXT: smpart::launchRewritten({"tiled", {{.*}}(&tiled<1024>)), true, 1024}, 1, 1024,
// CHECK-NEXT: smpart::launchRewritten({"wide", {{.*}}(&wide)), true, 512}, 1, 512,
// CHECK-NEXT: smpart::launchRewritten({"named", {{.*}}(&named)), true}, 1, 128,
// CHECK-NEXT: smpart::launchRewritten({"macros", {{.*}}(&macros)), true}, 1, 128,
// CHECK-NEXT: smpart::launchRewritten({"clustered", {{.*}}(&clustered)), true}, 1, 256,
// CHECK-NEXT: smpart::launchRewritten({"plain", {{.*}}(&plain)), true}, 1, 256,
// ALONE: smpart::launchRewritten({"bounded", {{.*}}(&bounded)), false, 256}, 1, 256,
