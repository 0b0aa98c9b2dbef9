// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// `k<<<g, b>>>(args)` becomes smpart::launchRewritten with shared memory and stream
// spelled as 0, the arguments captured, and a relaunch lambda that passes
// the control block first.
#include "cuda.h"

__global__ void saxpy(int n, float a, const float *x, float *y) {}

void run(int n, float *x, float *y) {
  saxpy<<<n / 256, 256>>>(n, 2.0f, x, y);
}

// CHECK: {{^}}  smpart::launchRewritten({"saxpy", reinterpret_cast<const void *>(&saxpy)}, n / 256, 256, 0, 0, [smpart_args = std::make_tuple(n, 2.0f, x, y)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { saxpy<<<smpart_p.grid, smpart_p.block, smpart_p.smem, smpart_p.stream>>>(smpart_p.ctl, smpart_a...); }, smpart_args); });
