// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// nvcc's crt/device_functions.h declares the memory orders and scopes of
// its atomic builtins (CUDA 12.8); clang's wrapper does not include that
// header and has no such builtins, so "use of undeclared identifier
// '__NV_ATOMIC_RELAXED'". The compatibility header declares both
// (toolkit/nvcc-intrinsics-current.test compares every enumerator).
__global__ void count(int *n, float *sum, const float *x) {
  __nv_atomic_fetch_add(n, 1, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
  __nv_atomic_fetch_add(sum, x[blockIdx.x], __NV_ATOMIC_RELAXED);
  int seen = __nv_atomic_load_n(n, __NV_ATOMIC_ACQUIRE);
  int expected = seen;
  __nv_atomic_compare_exchange_n(n, &expected, seen + 1, false,
                                 __NV_ATOMIC_ACQ_REL, __NV_ATOMIC_RELAXED);
  __nv_atomic_thread_fence(__NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_BLOCK);
}
// QUIET-NOT: error
// CHECK: __global__ void count(smpart::LaunchControl smpart_ctl, int *n, float *sum, const float *x) {
