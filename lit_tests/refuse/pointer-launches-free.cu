// RUN: %smpart %s -o %t.cu --manifest %t.json -- %stubflags 2>%t.err
// RUN: FileCheck %s < %t.cu
// RUN: FileCheck --check-prefix=WARN %s < %t.err
// RUN: %smpart --exclude-kernels=paired %s -o %t.excluded.cu -- %stubflags 2>%t.excluded.err
// RUN: FileCheck --check-prefix=EXCLUDED %s < %t.excluded.err
// A launch through a kernel pointer may launch any kernel whose address the
// file takes; where one of them must run on every SM (its CTAs form
// clusters), or is left alone (--exclude-kernels), the pointer launches
// run free too, and say which kernel. A callee that a second evaluation
// could change (a map's operator[] inserts, also through a template's
// dependent subscript; a volatile pointer, also behind `*`) is not written
// twice. A launch that names its kernel (`(+k)`) is not a launch
// through a pointer. The partition of a direct launch is named as CUDA
// names the kernel: with its inline namespace.
#include "cuda.h"

namespace std {
template <class K, class V> struct map {
  V &operator[](const K &);
};
} // namespace std

__global__ void __cluster_dims__(2, 1, 1) paired(float *p) { p[0] = 1; }
__global__ void plain(float *p) { p[threadIdx.x] = 2; }
// No pointer launch runs on a partition: the original kept for the table
// says nothing of one.
// WARN: pointer-launches-free.cu:{{[0-9]+}}:26: warning: smpart: kernel 'plain' keeps {{.*}} outside smpart's plan{{$}}
namespace lib {
inline namespace v2 {
__global__ void step(float *p) { p[threadIdx.x] = 3; }
__global__ void fixed(float *p) {
  if (threadIdx.x > 40)
    return;
  __syncthreads();
  p[threadIdx.x] = 4;
}
} // namespace v2
} // namespace lib
typedef void (*kfn)(float *);

template <class M> void viaTemplate(M &m, float *p) {
  m[3]<<<1, 32>>>(p);
  // CHECK: {{^}}  m[3]<<<1, 32>>>(p);
  // WARN: pointer-launches-free.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer 'm[3]' runs on every SM, outside smpart's plan: its callee is more than a read
}

void run(float *p, std::map<int, kfn> &by_id, kfn volatile &shared) {
  kfn table[] = {paired, plain};
  table[1]<<<1, 32>>>(p);
  // CHECK: {{^}}  table[1]<<<1, 32>>>(p);
  // WARN: pointer-launches-free.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer 'table[1]' runs on every SM, outside smpart's plan: the pointer may hold kernel 'paired', which runs on every SM: {{.*}}cluster
  // EXCLUDED: pointer-launches-free.cu:[[@LINE-3]]:3: warning: smpart: the launch through the kernel pointer 'table[1]' runs on every SM, outside smpart's plan: the pointer may hold kernel 'paired', which --kernels/--exclude-kernels leave unchanged
  by_id[3]<<<1, 32>>>(p);
  // CHECK: {{^}}  by_id[3]<<<1, 32>>>(p);
  // WARN: pointer-launches-free.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer 'by_id[3]' runs on every SM, outside smpart's plan: its callee is more than a read
  shared<<<1, 32>>>(p);
  // CHECK: {{^}}  shared<<<1, 32>>>(p);
  // WARN: pointer-launches-free.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer 'shared' runs on every SM, outside smpart's plan: its callee is more than a read
  kfn volatile *pp = &shared;
  (*pp)<<<1, 32>>>(p);
  // CHECK: {{^}}  (*pp)<<<1, 32>>>(p);
  // WARN: pointer-launches-free.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer '(*pp)' runs on every SM, outside smpart's plan: its callee is more than a read
  (+plain)<<<1, 32>>>(p);
  // WARN-NOT: kernel pointer '(+plain)'
  lib::step<<<1, 32>>>(p);
  // CHECK: smpart::launchRewritten({"lib::step"
  lib::fixed<<<1, 32>>>(p);
  // CHECK: {{^}}  lib::fixed<<<1, 32, 0, smpart::confined("lib::v2::fixed", 0)>>>(p);
}
