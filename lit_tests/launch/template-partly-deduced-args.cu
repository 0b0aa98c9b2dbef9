// RUN: %smpart --keep-original=headers %s -- %stubflags | FileCheck %s
// RUN: %smpart --keep-original=all %s -- %stubflags | FileCheck %s --check-prefix=KEEP
// With some template arguments written and the rest deduced, the address
// spells them all, so that the runtime can query the kernel (occupancy,
// shared memory limit) and load it before launching it.
#include "cuda.h"

namespace ops {
template <int Block, typename T> __global__ void clamp(const T *in, T lo) {}
template <int Block, typename F> __global__ void each(int n, F f) {}
template <class T, class... Ts> __global__ void many(T, Ts...) {}
} // namespace ops

namespace {
struct Op {
  int k;
};
} // namespace

void run(const float *x) {
  constexpr int kBlock = 512;
  ops::clamp<kBlock><<<1, kBlock>>>(x, 0.5f);
  ops::clamp<(kBlock > 256 ? 256 : 128)><<<1, 64>>>(x, 0.5f);
  // A lambda has no spelling: the runtime is told no address.
  ops::each<64><<<1, 64>>>(4, [] __device__(int i) { return i; });
  // Anonymous namespaces are not spelled.
  ops::each<64><<<1, 64>>>(4, Op{2});
  // A pack written in part is spelled whole.
  ops::many<int, float><<<1, 64>>>(1, 2.0f, 3.0);
}

// CHECK: {{^}}  smpart::launchRewritten({"ops::clamp", reinterpret_cast<const void *>(&ops::clamp<512, float>)}, 1, kBlock, 0, 0,
// CHECK: {{^}}  smpart::launchRewritten({"ops::clamp", reinterpret_cast<const void *>(&ops::clamp<256, float>)}, 1, 64, 0, 0,
// CHECK: {{^}}  smpart::launchRewritten({"ops::each", nullptr}, 1, 64, 0, 0,
// CHECK: {{^}}  smpart::launchRewritten({"ops::each", reinterpret_cast<const void *>(&ops::each<64, Op>)}, 1, 64, 0, 0,
// CHECK: {{^}}  smpart::launchRewritten({"ops::many", reinterpret_cast<const void *>(&ops::many<int, float, double>)}, 1, 64, 0, 0,
// With the original kept, the address names the rewritten overload.
// KEEP: {{^}}  smpart::launchRewritten({"ops::each", reinterpret_cast<const void *>(static_cast<void (*)(smpart::LaunchControl, int, Op)>(&ops::each<64, Op>)), true}, 1, 64, 0, 0,
