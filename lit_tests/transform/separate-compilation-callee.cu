// RUN: %smpart %s -o %t.cu --manifest=%t.json -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// RUN: FileCheck --check-prefix=MANIFEST %s < %t.json
// A device function that another translation unit defines (-fgpu-rdc) may
// read the block index: rewritten by smpart-transform too, it reads
// smpart::blockIdx(), which the kernel must publish. The kernel is
// transformed on that assumption, and the warning says what it rests on.
#include "cuda.h"

__device__ unsigned fromElsewhere(unsigned i);
__device__ unsigned here(unsigned i) { return i + 1; }

__global__ void calls(unsigned *p) { p[threadIdx.x] = fromElsewhere(threadIdx.x); }
__global__ void local(unsigned *p) { p[threadIdx.x] = here(threadIdx.x); }

// WARN: {{^}}{{.*}}separate-compilation-callee.cu:[[@LINE-3]]:55: warning: smpart: kernel 'calls' calls 'fromElsewhere', which this translation unit does not define (separate compilation): if it reads blockIdx/gridDim, its file must be rewritten by smpart-transform too, or it reads the physical block
// WARN-NOT: warning
// CHECK: {{^}}__global__ void calls(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK: for (smpart::detail::PublishingCta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK: {{^}}__global__ void local(smpart::LaunchControl smpart_ctl, unsigned *p) {
// CHECK: for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// MANIFEST: "name": "calls",
// MANIFEST: "status": "transformed",
// MANIFEST-NEXT: "reasons": [],
// MANIFEST-NEXT: "warnings": [
// MANIFEST-NEXT: "calls 'fromElsewhere', which this translation unit
// MANIFEST: "name": "local",
// MANIFEST: "warnings": [],
