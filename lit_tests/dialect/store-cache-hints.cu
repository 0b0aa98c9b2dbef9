// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- 2>&1 | FileCheck --allow-empty --check-prefix=QUIET %s
// RUN: FileCheck %s < %t.cu
// nvcc's sm_32_intrinsics.h declares the store cache hints for every
// scalar and vector type; clang's CUDA wrapper has none of them, and the
// toolkit's cuda_fp16.h only the __half ones ("no matching function for
// call to '__stcs'"). The compatibility header declares the rest
// (passes/nvcc/gen_intrinsics.py, toolkit/nvcc-intrinsics.test for all).
#include <cuda_fp16.h>

__global__ void stream(int4 *o, const int4 *i, float4 *f, int *n, __half *h) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  __stcs(o + t, __ldcs(i + t));
  __stcg(f + t, make_float4(1, 2, 3, 4));
  __stwb(n + t, 1);
  __stwt(n + t, __ldlu(n + t));
  __stcs(h + t, __float2half(1.0f));
}
// QUIET-NOT: error
// CHECK: __global__ void stream(smpart::LaunchControl smpart_ctl, int4 *o, const int4 *i, float4 *f, int *n, __half *h) {
// CHECK: smpart_cta.blockIdx()
