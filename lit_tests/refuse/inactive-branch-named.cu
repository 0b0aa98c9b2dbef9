// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A kernel only named (not launched with <<<>>>) in a branch this
// configuration skips: the other configuration would put it in a graph
// node, pass it to a launch API or define it again, all with the original
// signature. It is refused, with a note at the name. Names in comments and
// string literals of skipped code, and members that share the name, do not
// count.
#include "cuda.h"

struct KernelNodeParams { void *func; void **kernelParams; };

__global__ void in_graph(int *p) { p[threadIdx.x] = 1; }
__global__ void commented(int *p) { p[threadIdx.x] = 2; }

void run(int *p, KernelNodeParams &node) {
#ifdef USE_GRAPHS
  node.func = (void *)in_graph;
  // commented<<<1, 32>>>(p) was the old path
  const char *why = "commented";
  node.commented = 0;
#else
  in_graph<<<1, 32>>>(p);
#endif
  commented<<<1, 32>>>(p);
}
// WARN: {{^}}{{.*}}inactive-branch-named.cu:[[@LINE-14]]:17: warning: smpart: kernel 'in_graph' not transformed: named in code the preprocessor skipped (line [[@LINE-9]])
// WARN-NEXT: {{^}}{{.*}}inactive-branch-named.cu:[[@LINE-10]]:23: note: named in an inactive preprocessor branch
// WARN-NOT: kernel 'commented'
// CHECK: {{^}}__global__ void in_graph(int *p) { p[threadIdx.x] = 1; }
// CHECK: {{^}}__global__ void commented(smpart::LaunchControl smpart_ctl, int *p) {
