// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A kernel whose address is taken for anything but a <<<>>> launch is
// refused: a CUDA graph kernel node, a typed function pointer or a table
// would launch it with its original argument list, without the control
// block. Queries that do not launch (occupancy, attributes) are fine.
#include "cuda.h"

struct KernelNodeParams { void *func; void **kernelParams; };
extern "C" int cudaFuncGetAttributes(void *attr, const void *func);

__global__ void in_graph(int *p) { p[threadIdx.x] = 1; }
__global__ void through_pointer(int *p) { p[threadIdx.x] = 2; }
__global__ void queried(int *p) { p[threadIdx.x] = 3; }

typedef void (*kfn_t)(int *);

void build(int *p, KernelNodeParams &node) {
  node.func = (void *)in_graph;
  kfn_t f = through_pointer;
  f<<<1, 32>>>(p);
  cudaFuncGetAttributes(nullptr, (const void *)queried);
  queried<<<1, 32>>>(p);
}
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-13]]:17: warning: smpart: kernel 'in_graph' not transformed: its address is taken at line [[@LINE-6]] for something other than a <<<>>> launch
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-7]]:23: note: address of the kernel taken here
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-14]]:17: warning: smpart: kernel 'through_pointer' not transformed: its address is taken at line [[@LINE-7]]
// WARN-NOT: kernel 'queried' not transformed
// CHECK: {{^}}__global__ void in_graph(int *p) {
// CHECK: {{^}}__global__ void through_pointer(int *p) {
// CHECK: {{^}}__global__ void queried(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: smpart::launchRewritten({"queried"
