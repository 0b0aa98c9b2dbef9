// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// With some template arguments written and the rest deduced, the address
// spells them all, so that the runtime can query the kernel (occupancy,
// shared memory limit) and load it before launching it.
#include "cuda.h"

namespace ops {
template <int Block, typename T> __global__ void clamp(const T *in, T lo) {}
} // namespace ops

void run(const float *x) {
  constexpr int kBlock = 512;
  ops::clamp<kBlock><<<1, kBlock>>>(x, 0.5f);
  ops::clamp<(kBlock > 256 ? 256 : 128)><<<1, 64>>>(x, 0.5f);
}

// CHECK: {{^}}  smpart::launch({"ops::clamp", reinterpret_cast<const void *>(&ops::clamp<512, float>)}, 1, kBlock, 0, 0,
// CHECK: {{^}}  smpart::launch({"ops::clamp", reinterpret_cast<const void *>(&ops::clamp<256, float>)}, 1, 64, 0, 0,
