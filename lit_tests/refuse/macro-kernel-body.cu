// RUN: %smpart %s -o %t.cu --manifest=%t.json -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck --check-prefix=JSON %s < %t.json
// RUN: FileCheck %s < %t.cu
// A kernel whose body is spelled in a macro cannot be edited: it is
// refused with a warning and in the manifest (not silently left out), and
// its launches run unchanged on the SMs of their partition.
#include "cuda.h"

#define KERNEL(name) __global__ void name(int *p) { p[0] = 1; }
#define BODY { p[0] = 2; }

KERNEL(a)
__global__ void b(int *p) BODY

void run(int *p) {
  a<<<1, 1>>>(p);
  b<<<1, 1>>>(p);
}
// WARN: warning: smpart: kernel 'a' not transformed: kernel body spelled inside a macro
// WARN: warning: smpart: kernel 'b' not transformed: kernel body spelled inside a macro
// JSON: "name": "a",
// JSON: "status": "refused",
// JSON: "kernel body spelled inside a macro"
// JSON: "name": "b",
// JSON: "status": "refused",
// CHECK: {{^}}  a<<<1, 1, 0, smpart::confined("a", 0)>>>(p);
// CHECK: {{^}}  b<<<1, 1, 0, smpart::confined("b", 0)>>>(p);
