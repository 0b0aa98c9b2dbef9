// RUN: %smpart %s -- %stubflags | FileCheck %s
// A launch spelled in a macro body is rewritten in the body, once for all
// expansions; the kernel is a macro parameter, so the name says so and the
// address is left to the runtime (nullptr).
#include "cuda.h"

#define LAUNCH(k, n, ...) k<<<(n + 255) / 256, 256>>>(__VA_ARGS__)

__global__ void a(int n, int *x) {}
__global__ void b(int n, float *y) {}

void run(int n, int *x, float *y) {
  LAUNCH(a, n, n, x);
  LAUNCH(b, n, n, y);
}

// CHECK: {{^}}#define LAUNCH(k, n, ...) smpart::launch({"k in macro LAUNCH", nullptr}, (n + 255) / 256, 256, 0, 0, [smpart_args = std::make_tuple(__VA_ARGS__)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { k<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); })
// CHECK: {{^}}  LAUNCH(a, n, n, x);
// CHECK-NEXT: {{^}}  LAUNCH(b, n, n, y);
