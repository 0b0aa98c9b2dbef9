// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// A launch with explicit template arguments takes the address of that
// specialization, and relaunches with the same arguments.
#include "cuda.h"

template <typename T> __global__ void scale(T *x, T a) {}

void run(float *x) {
  scale<float><<<1, 64>>>(x, 2.0f);
}

// CHECK: {{^}}  smpart::launchRewritten({"scale", reinterpret_cast<const void *>(&scale<float>)}, 1, 64, 0, 0, [smpart_args = std::make_tuple(x, 2.0f)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { scale<float><<<smpart_p.grid,
