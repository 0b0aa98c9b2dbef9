// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// With deduced template arguments the address spells the deduced ones.
#include "cuda.h"

template <typename T> __global__ void scale(T *x, T a) {}

void run(int *x) {
  scale<<<1, 64>>>(x, 3);
}

// CHECK: {{^}}  smpart::launchRewritten({"scale", reinterpret_cast<const void *>(&scale<int>)}, 1, 64, 0, 0, [smpart_args = std::make_tuple(x, 3)](const smpart::LaunchParams &smpart_p) { std::apply([&](const auto &...smpart_a) { scale<<<smpart_p.grid,
