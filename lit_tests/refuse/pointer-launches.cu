// RUN: %smpart %s -o %t.cu --manifest %t.json -- %stubflags 2>%t.err
// RUN: FileCheck %s < %t.cu
// RUN: FileCheck --check-prefix=WARN %s < %t.err
// RUN: FileCheck --check-prefix=MANIFEST %s < %t.json
// RUN: %smpart --confine-refused=false %s -o %t.free.cu --manifest %t.free.json -- %stubflags 2>%t.free.err
// RUN: FileCheck --check-prefix=FREE %s < %t.free.cu
// RUN: FileCheck --check-prefix=FREE-MANIFEST %s < %t.free.json
// RUN: FileCheck --check-prefix=FREE-WARN --allow-empty %s < %t.free.err
// A <<<>>> launch through a kernel pointer (a variable, a table, a member,
// a template's parameter) may launch any kernel: it keeps everything as
// written and runs on the SMs of the partition of the kernel the pointer
// holds, smpart::confined(pointer, stream). The callee is written twice,
// so one that calls a function runs free, as does a launch in a macro
// body; each says why. A direct launch is LaunchRewrite's, not this.
#include "cuda.h"

extern "C" __global__ void scale(float *p) { p[threadIdx.x] *= 2; }
extern "C" __global__ void shift(float *p) { p[threadIdx.x] += 1; }
typedef void (*kfn)(float *);
struct Ops {
  kfn step;
  kfn table[2];
};
kfn pick(int i);
#define THROUGH(k) k<<<1, 32>>>(p)

template <class F> void generic(F f, float *p, cudaStream_t s) {
  f<<<1, 32, 0, s>>>(p);
}
// CHECK: {{^}}  f<<<1, 32, 0, smpart::confined(f, s)>>>(p);

void run(float *p, int i, cudaStream_t s, Ops &ops) {
  kfn kernels[] = {scale, shift};
  for (kfn k : kernels)
    k<<<1, 32>>>(p);
  // CHECK: {{^}}    k<<<1, 32, 0, smpart::confined(k, 0)>>>(p);
  kfn k = scale;
  (*k)<<<2, 64, 128>>>(p);
  // CHECK: {{^}}  (*k)<<<2, 64, 128, smpart::confined((*k), 0)>>>(p);
  ops.step<<<dim3(1), dim3(32), 0, s>>>(p);
  // CHECK: {{^}}  ops.step<<<dim3(1), dim3(32), 0, smpart::confined(ops.step, s)>>>(p);
  ops.table[i]<<<1, 32>>>(p);
  // CHECK: {{^}}  ops.table[i]<<<1, 32, 0, smpart::confined(ops.table[i], 0)>>>(p);
  pick(i)<<<1, 32>>>(p);
  // CHECK: {{^}}  pick(i)<<<1, 32>>>(p);
  // WARN: pointer-launches.cu:[[@LINE-2]]:3: warning: smpart: the launch through the kernel pointer 'pick(i)' runs on every SM, outside smpart's plan: its callee is more than a read of a variable, member or element, and would be evaluated twice
  THROUGH(k);
  // CHECK: {{^}}  THROUGH(k);
  // WARN: pointer-launches.cu:[[@LINE-2]]:11: warning: smpart: the launch through the kernel pointer 'k' runs on every SM, outside smpart's plan: it is spelled in a macro or across files
  scale<<<1, 32>>>(p);
  // CHECK: {{^}}  scale<<<1, 32, 0, smpart::confined("scale", 0)>>>(p);
  generic(k, p, s);
}

// MANIFEST:      "name": "shift",
// MANIFEST:      "confinement": "free",
// MANIFEST-NEXT: "free_because": "no <<<>>> launch of it by name in the rewritten files (the launches through a kernel pointer, at {{.*}}pointer-launches.cu:{{[0-9]+}}, {{.*}}, run on the partition of the kernel the pointer holds)"
// MANIFEST:      "pointer_launches": [
// MANIFEST:        "callee": "f",
// MANIFEST:        "confinement": "confined"
// MANIFEST:        "callee": "k",
// MANIFEST:        "confinement": "confined"
// MANIFEST:        "callee": "pick(i)",
// MANIFEST:        "confinement": "free",
// MANIFEST-NEXT:   "free_because": "its callee is more than a read of a variable, member or element, and would be evaluated twice"

// FREE:      {{^}}    k<<<1, 32>>>(p);
// FREE:      {{^}}  (*k)<<<2, 64, 128>>>(p);
// FREE-MANIFEST:      "callee": "f",
// FREE-MANIFEST:      "confinement": "free",
// FREE-MANIFEST-NEXT: "free_because": "--confine-refused=false"
// FREE-WARN-NOT: launch through the kernel pointer
