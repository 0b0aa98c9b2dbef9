// REQUIRES: cuda-toolkit
// RUN: %smpart %s -o %t.cu --cuda-path=%cuda_path -- -DCUDA_API_PER_THREAD_DEFAULT_STREAM 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// With per-thread default streams (nvcc --default-stream per-thread)
// cuda_runtime_api.h renames cudaLaunchKernel to cudaLaunchKernel_ptsz and
// cudaLaunchCooperativeKernel to cudaLaunchCooperativeKernel_ptsz: a kernel
// launched through them still passes its original argument list and is
// refused, with one warning per launch.
#include <cuda_runtime.h>

__global__ void via_api(int *p) { p[threadIdx.x] = 1; }
__global__ void via_coop(int *p) { p[threadIdx.x] = 2; }

void run(int *p) {
  void *args[] = {&p};
  cudaLaunchKernel((const void *)via_api, dim3(1), dim3(32), args, 0, 0);
  cudaLaunchCooperativeKernel((const void *)via_coop, dim3(1), dim3(32), args, 0, 0);
}
// WARN: {{^}}{{.*}}per-thread-stream-launch-api.cu:[[@LINE-3]]:3: warning: smpart: kernel 'via_api' not transformed: launched through cudaLaunchKernel_ptsz, whose argument list smpart cannot rewrite
// WARN-NEXT: {{^}}{{.*}}per-thread-stream-launch-api.cu:[[@LINE-3]]:3: warning: smpart: kernel 'via_coop' not transformed: launched through cudaLaunchCooperativeKernel_ptsz
// WARN-NOT: warning
// CHECK: {{^}}__global__ void via_api(int *p) { p[threadIdx.x] = 1; }
// CHECK: {{^}}__global__ void via_coop(int *p) { p[threadIdx.x] = 2; }
