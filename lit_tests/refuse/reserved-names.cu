// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// The rewritten kernel declares `smpart_ctl` (its control parameter) and
// `smpart_cta` (its CTA loop): a kernel that declares either would not
// compile, or would read the wrong one. Refused, left as written.
#include "cuda.h"

__global__ void param(int *smpart_ctl) { smpart_ctl[0] = 1; }
__global__ void local(int *p) {
  int smpart_cta = 2;
  p[0] = smpart_cta;
}
__global__ void fine(int *p) { p[0] = 3; }

// WARN: {{^}}{{.*}}reserved-names.cu:8:28: warning: smpart: kernel 'param' not transformed: declares 'smpart_ctl', a name the rewritten kernel uses for its own
// WARN: {{^}}{{.*}}reserved-names.cu:10:7: warning: smpart: kernel 'local' not transformed: declares 'smpart_cta', a name the rewritten kernel uses for its own
// WARN-NOT: 'fine'
// CHECK: {{^}}__global__ void param(int *smpart_ctl) { smpart_ctl[0] = 1; }
// CHECK: {{^}}__global__ void fine(smpart::LaunchControl smpart_ctl, int *p) {
