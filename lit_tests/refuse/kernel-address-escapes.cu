// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A kernel's address taken for anything but a <<<>>> launch (a CUDA graph
// kernel node, a typed function pointer, a table) launches it with its
// original argument list, without the control block. Where the kernel is
// also launched with <<<>>>, it is transformed and each such use names the
// original, kept beside the rewritten one (one warning per kernel); a
// kernel nothing launches with <<<>>> is refused, and so is one whose use
// cannot name the original: in device code, or a template named without
// its arguments (deduced from the pointer's type). Queries that do not
// launch (occupancy, attributes) are fine.
#include "cuda.h"

struct KernelNodeParams { void *func; void **kernelParams; };
extern "C" int cudaFuncGetAttributes(void *attr, const void *func);

__global__ void in_graph(int *p) { p[threadIdx.x] = 1; }
__global__ void through_pointer(int *p) { p[threadIdx.x] = 2; }
__global__ void queried(int *p) { p[threadIdx.x] = 3; }
__global__ void graph_and_launch(int *p) { p[threadIdx.x] = 4; }
__global__ void from_device(int *p) { p[threadIdx.x] = 5; }
template <class T> __global__ void deduced(T *p) { p[threadIdx.x] = 6; }

typedef void (*kfn_t)(int *);
__device__ kfn_t device_table[] = {from_device};

void build(int *p, KernelNodeParams &node, KernelNodeParams &other) {
  node.func = (void *)in_graph;
  kfn_t f = through_pointer;
  f<<<1, 32>>>(p);
  cudaFuncGetAttributes(nullptr, (const void *)queried);
  queried<<<1, 32>>>(p);
  other.func = (void *)&graph_and_launch;
  graph_and_launch<<<1, 32>>>(p);
  from_device<<<1, 32>>>(p);
  kfn_t g = deduced;
  deduced<<<1, 32>>>(p);
}
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-22]]:17: warning: smpart: kernel 'in_graph' not transformed: its address is taken at line [[@LINE-11]] for something other than a <<<>>> launch
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-12]]:23: note: address of the kernel taken here
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-23]]:17: warning: smpart: kernel 'through_pointer' not transformed: its address is taken at line [[@LINE-12]]
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-9]]:25: warning: smpart: kernel 'graph_and_launch' keeps its original definition beside the rewritten one for the use of its address at line [[@LINE-9]]
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-22]]:17: warning: smpart: kernel 'from_device' not transformed: its address is taken at line [[@LINE-18]]
// WARN-DAG: {{^}}{{.*}}kernel-address-escapes.cu:[[@LINE-22]]:36: warning: smpart: kernel 'deduced' not transformed: its address is taken at line [[@LINE-8]]
// WARN-NOT: kernel 'queried' not transformed
// CHECK: {{^}}__global__ void in_graph(int *p) {
// CHECK: {{^}}__global__ void through_pointer(int *p) {
// CHECK: {{^}}__global__ void queried(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}__global__ void graph_and_launch(int *p) { p[threadIdx.x] = 4; }
// CHECK: {{^}}__global__ void graph_and_launch(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK: {{^}}__global__ void from_device(int *p) {
// CHECK: node.func = (void *)in_graph;
// CHECK: smpart::launchRewritten({"queried"
// CHECK: other.func = (void *)smpart::original(&graph_and_launch, &graph_and_launch);
// CHECK-NEXT: smpart::launchRewritten({"graph_and_launch"
