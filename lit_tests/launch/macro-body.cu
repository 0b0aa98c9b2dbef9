// RUN: %smpart %s -- %stubflags | FileCheck %s
// A launch spelled in a macro body is rewritten in the body, once for all
// expansions, and the address is left to the runtime (nullptr). Where the
// kernel is a macro parameter, #k names each expansion's kernel ("a", "b":
// profiles and plans must tell them apart); a kernel the body names
// itself keeps that name, with the macro's.
#include "cuda.h"

#define LAUNCH(k, n, ...) k<<<(n + 255) / 256, 256>>>(__VA_ARGS__)
#define LAUNCH_A(n, x) a<<<1, 32>>>(n, x)

__global__ void a(int n, int *x) {}
__global__ void b(int n, float *y) {}

void run(int n, int *x, float *y) {
  LAUNCH(a, n, n, x);
  LAUNCH(b, n, n, y);
  LAUNCH_A(n, x);
}

// CHECK: {{^}}#define LAUNCH(k, n, ...) smpart::launchRewritten({#k, nullptr}, (n + 255) / 256, 256, 0, 0, [smpart_args = std::make_tuple(__VA_ARGS__)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { k<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); })
// CHECK-NEXT: {{^}}#define LAUNCH_A(n, x) smpart::launchRewritten({"a in macro LAUNCH_A", nullptr},
// CHECK: {{^}}  LAUNCH(a, n, n, x);
// CHECK-NEXT: {{^}}  LAUNCH(b, n, n, y);
// CHECK-NEXT: {{^}}  LAUNCH_A(n, x);
