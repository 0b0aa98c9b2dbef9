// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// Clusters requested at launch rather than by __cluster_dims__: a required
// cluster size set with cudaFuncSetAttribute makes every launch a cluster
// launch (the persistent grid is not sized in whole clusters, nor kept
// co-scheduled), and cudaLaunchKernelEx with cudaLaunchAttributeClusterDimension
// passes the original argument list. Both kernels are refused; other
// attributes (dynamic shared memory size) are harmless queries.
#include "cuda.h"

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributeRequiredClusterWidth = 10,
};
enum cudaLaunchAttributeID { cudaLaunchAttributeClusterDimension = 4 };
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  struct { unsigned x, y, z; } clusterDim;
};
struct cudaLaunchConfig_t {
  dim3 gridDim, blockDim;
  cudaLaunchAttribute *attrs;
  unsigned numAttrs;
};
extern "C" cudaError_t cudaFuncSetAttribute(const void *func,
                                            cudaFuncAttribute attr, int value);
template <typename... Params, typename... Args>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config,
                               void (*kernel)(Params...), Args &&...args);

__global__ void wide(int *p) { p[threadIdx.x] = 1; }
__global__ void launched_ex(int *p) { p[threadIdx.x] = 2; }
__global__ void big_smem(int *p) { p[threadIdx.x] = 3; }

void run(int *p) {
  cudaFuncSetAttribute((const void *)wide,
                       cudaFuncAttributeRequiredClusterWidth, 2);
  wide<<<8, 32>>>(p);

  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.clusterDim = {2, 1, 1};
  cudaLaunchConfig_t config = {dim3(8), dim3(32), &attr, 1};
  cudaLaunchKernelEx(&config, launched_ex, p);

  cudaFuncSetAttribute((const void *)big_smem,
                       cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  big_smem<<<8, 32, 65536>>>(p);
}
// WARN-DAG: {{^}}{{.*}}cluster-launch-attributes.cu:[[@LINE-19]]:17: warning: smpart: kernel 'wide' not transformed: given a thread-block cluster attribute at line [[@LINE-14]]
// WARN-DAG: {{^}}{{.*}}cluster-launch-attributes.cu:[[@LINE-15]]:38: note: cluster attribute set here
// WARN-DAG: {{^}}{{.*}}cluster-launch-attributes.cu:[[@LINE-8]]:3: warning: smpart: kernel 'launched_ex' not transformed: launched through cudaLaunchKernelEx
// WARN-NOT: kernel 'big_smem' not transformed
// CHECK: {{^}}__global__ void wide(int *p) {
// CHECK: {{^}}__global__ void launched_ex(int *p) {
// CHECK: {{^}}__global__ void big_smem(smpart::LaunchControl smpart_ctl, int *p) {
