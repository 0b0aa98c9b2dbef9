// REQUIRES: nvcc, cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -c -I %runtime_include %t/out.cu -o %t/out.o
// The rewritten kernels compile with nvcc against the smpart runtime
// headers: early return, empty and `(void)` bodies, forward declarations,
// templates with explicit instantiations, __launch_bounds__, namespaces,
// device functions, bypass loads of scalars and vectors, and a loop of them
// written once per tag. (nvcc rejects
// static member kernels, which clang accepts, so they are not here.)
#include <cuda_runtime.h>

__device__ unsigned logicalRow() { return blockIdx.y * gridDim.x + blockIdx.x; }

__global__ void early(int n, const float *x, float *y);
__global__ void early(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float *p = x + 1;
  y[i] = x[i] + *p + y[i];
}

__global__ void empty() {}
__global__ void noArgs(void) { __syncthreads(); }

template <typename T>
__global__ void __launch_bounds__(256, 2) scale(T *x, T a, int n = 8) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    x[i] *= a;
}
template __global__ void scale<float>(float *, float, int);

// A bound that depends on a template parameter.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK, 2) clampBlock(float *x) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  x[i] = fminf(x[i], 1.0f);
}
template __global__ void clampBlock<512>(float *);

// A loop of tagged loads, written once per bypass tag.
__global__ void rowSum(int n, const float *a, float *out) {
  float sum = 0.0f;
#pragma unroll 4
  for (int k = 0; k < n; ++k) {
    if (a[k] < 0.0f)
      return;
    sum += a[k];
  }
  out[threadIdx.x] = sum;
}

namespace app {
__global__ void vec(const float4 *v, float *out) {
  __shared__ float tile[32];
  float4 f = v[threadIdx.x];
  tile[threadIdx.x] = f.x + f.w;
  __syncthreads();
  out[logicalRow()] = tile[31 - threadIdx.x];
}
} // namespace app

// Every kernel is transformed (a refused one would compile unchanged): no
// warning, and each has the rewritten signature.
// QUIET-NOT: warning
// CHECK-DAG: {{^}}__global__ void early(smpart::LaunchControl smpart_ctl, int n, const float *x, float *y);
// CHECK-DAG: {{^}}__global__ void early(smpart::LaunchControl smpart_ctl, int n, const float *x, float *y) {
// CHECK-DAG: {{^}}__global__ void empty(smpart::LaunchControl smpart_ctl) {
// CHECK-DAG: {{^}}__global__ void noArgs(smpart::LaunchControl smpart_ctl) {
// CHECK-DAG: {{^}}__global__ void __launch_bounds__(512) scale(smpart::LaunchControl smpart_ctl, T *x, T a, int n = 8) {
// CHECK-DAG: {{^}}__global__ void __launch_bounds__({{.*}}(BLOCK){{.*}} ? 0 : (2)) clampBlock(smpart::LaunchControl smpart_ctl, float *x) {
// CHECK-DAG: {{^}}template __global__ void scale<float>(smpart::LaunchControl smpart_ctl, float *, float, int);
// CHECK-DAG: {{^}}__global__ void vec(smpart::LaunchControl smpart_ctl, const float4 *v, float *out) {
// CHECK-DAG: {{^}} y[i] = smpart::load(&x[i], true) + smpart::load(&*p, true) + smpart::load(&y[i], true);
// CHECK-DAG: {{^}} float4 f = smpart::load(&v[threadIdx.x], smpart_cta.bypass());
// CHECK-DAG: {{^}}    sum += smpart::load(&a[k], true);
// CHECK-DAG: {{^}}    sum += smpart::load(&a[k], false);
