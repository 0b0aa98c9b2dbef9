// REQUIRES: nvcc, cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -c -I %runtime_include %t/out.cu -o %t/out.o
// Every launch form the tool rewrites compiles with nvcc: two, three and
// four configuration arguments, dim3, explicit and deduced template
// arguments, launches in a host function template, overloads, default
// arguments, launches in macro arguments and macro bodies, and in a lambda.
#include <cuda_runtime.h>

#define CHECK(...) (void)(__VA_ARGS__)
#define LAUNCH(k, n, ...) k<<<((n) + 255) / 256, 256>>>(__VA_ARGS__)

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
template <typename T> __global__ void fill(T *p, T v, int n = 1) {
  p[blockIdx.x % n] = v;
}
__global__ void clear(int *p) { p[threadIdx.x] = 0; }
__global__ void clear(float *p) { p[threadIdx.x] = 0; }
__global__ void step(float *y, float by = 1.0f) { y[threadIdx.x] += by; }

template <typename T> void fillAll(T *p, T v) { fill<T><<<1, 32>>>(p, v, 4); }

void run(int n, float *x, float *y, int *i, cudaStream_t s) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  saxpy<<<4, 256, 0>>>(n, 2.0f, x, y);
  saxpy<<<dim3(4, 1, 1), dim3(256), 0, s>>>(n, 2.0f, x, y);
  fill<float><<<1, 32>>>(y, 1.0f);
  fill<<<1, 32>>>(i, 3, 2);
  fillAll(x, 2.0f);
  clear<<<1, 32>>>(i);
  clear<<<1, 32>>>(x);
  step<<<1, 32>>>(y);
  CHECK(step<<<1, 32>>>(y, 2.0f));
  LAUNCH(saxpy, n, n, 1.0f, x, y);
  LAUNCH(step, n, y);
  auto later = [&](int blocks) { saxpy<<<blocks, 256>>>(n, 3.0f, x, y); };
  later(2);
}

// Every kernel is transformed and every launch rewritten (a refused kernel
// and its launches would compile unchanged): no warning, the rewritten
// signatures, and smpart::launchRewritten at every launch site.
// QUIET-NOT: warning
// CHECK: {{^}}#define LAUNCH(k, n, ...) smpart::launchRewritten({#k,
// CHECK-DAG: {{^}}__global__ void saxpy(smpart::LaunchControl smpart_ctl, int n, float a, const float *x, float *y) {
// CHECK-DAG: {{^}}template <typename T> __global__ void fill(smpart::LaunchControl smpart_ctl, T *p, T v, int n = 1) {
// CHECK-DAG: {{^}}__global__ void clear(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK-DAG: {{^}}__global__ void clear(smpart::LaunchControl smpart_ctl, float *p) {
// CHECK-DAG: {{^}}__global__ void step(smpart::LaunchControl smpart_ctl, float *y, float by = 1.0f) {
// CHECK: {{^}}template <typename T> void fillAll(T *p, T v) { smpart::launchRewritten({"fill",
// CHECK: {{^}}void run(
// CHECK-NEXT: {{^}} smpart::launchRewritten({"saxpy",{{.*}}(n + 255) / 256, 256,
// CHECK-NEXT: {{^}} smpart::launchRewritten({"saxpy",{{.*}}4, 256, 0,
// CHECK-NEXT: {{^}} smpart::launchRewritten({"saxpy",{{.*}}dim3(4, 1, 1), dim3(256), 0, s,
// CHECK-NEXT: {{^}} smpart::launchRewritten({"fill",{{.*}}&fill<float>
// CHECK-NEXT: {{^}} smpart::launchRewritten({"fill",{{.*}}&fill<int>
// CHECK-NEXT: {{^}} fillAll(x, 2.0f);
// CHECK-NEXT: {{^}} smpart::launchRewritten({"clear",{{.*}}(smpart::LaunchControl, int *)
// CHECK-NEXT: {{^}} smpart::launchRewritten({"clear",{{.*}}(smpart::LaunchControl, float *)
// CHECK-NEXT: {{^}} smpart::launchRewritten({"step",
// CHECK-NEXT: {{^}} CHECK(smpart::launchRewritten({"step",
// CHECK-NEXT: {{^}} LAUNCH(saxpy, n, n, 1.0f, x, y);
// CHECK-NEXT: {{^}} LAUNCH(step, n, y);
// CHECK-NEXT: {{^}} auto later = [&](int blocks) { smpart::launchRewritten({"saxpy",
