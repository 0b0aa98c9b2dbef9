// test_inputs/ kernels in the CPU emulation: the original file and its
// smpart-transform output run side by side; the rewritten form must match
// the original under 1000 seeded schedules per kernel (preemption, resume,
// growth, SM masks, CTAs per SM, bypass counts changing at random).
#include "emulation_harness.hpp"

#include "smpart/control.hpp"

#include <climits>
#include <numeric>

using smpart::LaunchControl;

#define SMPART_DECLARE(file, kernel, ...)                                      \
  namespace emu_orig_##file { void kernel(__VA_ARGS__); }                      \
  namespace emu_xf_##file { void kernel(LaunchControl, __VA_ARGS__); }

SMPART_DECLARE(vector_ops, saxpy, int, float, const float *, float *)
SMPART_DECLARE(vector_ops, vector_add, const float *, const float *, float *, int)
SMPART_DECLARE(reduction, reduce_sum, const float *, float *, int)
SMPART_DECLARE(reduction, reduce_min_int, const int *, int, int *)
SMPART_DECLARE(histogram, histogram256, const unsigned char *, int, unsigned int *)
SMPART_DECLARE(transpose, transpose_tiled, const float *, float *, int, int)
SMPART_DECLARE(block_helper, record_block_ids, unsigned int *, unsigned int *, unsigned int *)
SMPART_DECLARE(block_helper, volume_scale3d, const float *, float *, int, int, int, float)

namespace {

using smpart::emu::asDoubles;
using smpart::emu::KernelCase;

// The original and rewritten calls of one kernel with the same arguments.
#define SMPART_CASE(file, kernel, ...)                                         \
  k.original = [&] { emu_orig_##file::kernel(__VA_ARGS__); };                  \
  k.transformed = [&](const LaunchControl &smpart_c) {                         \
    emu_xf_##file::kernel(smpart_c, __VA_ARGS__);                              \
  }

const unsigned kSchedules = smpart::emu::schedulesFromEnv(1000);

void run(const KernelCase &k) {
  EXPECT_EQ(smpart::emu::runProperty(k, kSchedules), kSchedules);
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 7) % 23) * scale;
  return v;
}

TEST(TestInputs, Saxpy) {
  const int n = 700;
  std::vector<float> x, y;
  KernelCase k{"vector_ops.cu saxpy", dim3(3), dim3(256)};
  k.reset = [&] { x = ramp(n, 0.5f); y = ramp(n, 1.0f); };
  SMPART_CASE(vector_ops, saxpy, n, 2.0f, x.data(), y.data());
  k.outputs = [&] { return asDoubles(y); };
  run(k);
}

TEST(TestInputs, VectorAdd) {
  const int n = 500;
  std::vector<float> a, b, c;
  KernelCase k{"vector_ops.cu vector_add", dim3(4), dim3(128)};
  k.reset = [&] { a = ramp(n, 1.f); b = ramp(n, 3.f); c.assign(n, 0.f); };
  SMPART_CASE(vector_ops, vector_add, a.data(), b.data(), c.data(), n);
  k.outputs = [&] { return asDoubles(c); };
  run(k);
}

TEST(TestInputs, ReduceSumExternShared) {
  const int n = 1000, block = 64, grid = (n + 2 * block - 1) / (2 * block);
  std::vector<float> in, partial;
  KernelCase k{"reduction.cu reduce_sum", dim3(grid), dim3(block)};
  k.dynamic_smem = block * sizeof(float);
  k.reset = [&] { in = ramp(n, 1.f); partial.assign(grid, -1.f); };
  SMPART_CASE(reduction, reduce_sum, in.data(), partial.data(), n);
  k.outputs = [&] { return asDoubles(partial); };
  run(k);
}

TEST(TestInputs, ReduceMinIntGridStride) {
  const int n = 900;
  std::vector<int> in;
  int result = 0;
  KernelCase k{"reduction.cu reduce_min_int", dim3(3), dim3(64)};
  k.dynamic_smem = 64 * sizeof(int);
  k.reset = [&] {
    in.resize(n);
    for (int i = 0; i < n; ++i)
      in[i] = 1000 - (i * 37) % 911;
    result = INT_MAX;
  };
  SMPART_CASE(reduction, reduce_min_int, in.data(), n, &result);
  k.outputs = [&] { return std::vector<double>{double(result)}; };
  run(k);
}

TEST(TestInputs, Histogram256SharedAtomics) {
  const int n = 3000;
  std::vector<unsigned char> data;
  std::vector<unsigned int> bins;
  KernelCase k{"histogram.cu histogram256", dim3(3), dim3(256)};
  k.reset = [&] {
    data.resize(n);
    for (int i = 0; i < n; ++i)
      data[i] = static_cast<unsigned char>((i * 131) % 256);
    bins.assign(256, 0);
  };
  SMPART_CASE(histogram, histogram256, data.data(), n, bins.data());
  k.outputs = [&] { return asDoubles(bins); };
  run(k);
}

TEST(TestInputs, TransposeTiled) {
  const int w = 40, h = 70;
  std::vector<float> in, out;
  KernelCase k{"transpose.cu transpose_tiled", dim3((w + 31) / 32, (h + 31) / 32),
               dim3(32, 8)};
  k.reset = [&] { in = ramp(w * h, 1.f); out.assign(w * h, 0.f); };
  SMPART_CASE(transpose, transpose_tiled, in.data(), out.data(), w, h);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

TEST(TestInputs, RecordBlockIds3dHelpers) {
  const dim3 grid(3, 2, 2), block(4, 2, 2);
  const unsigned blocks = 12, threads = 16;
  std::vector<unsigned> thread_block, coords, info;
  KernelCase k{"block_helper.cu record_block_ids", grid, block};
  k.reset = [&] {
    thread_block.assign(blocks * threads, 0xffffffffu);
    coords.assign(3 * blocks, 0xffffffffu);
    info.assign(2, 0);
  };
  SMPART_CASE(block_helper, record_block_ids, thread_block.data(),
              coords.data(), info.data());
  k.outputs = [&] {
    auto v = asDoubles(thread_block);
    for (unsigned c : coords) v.push_back(c);
    for (unsigned c : info) v.push_back(c);
    return v;
  };
  run(k);
}

TEST(TestInputs, VolumeScale3d) {
  const int nx = 10, ny = 9, nz = 5;
  std::vector<float> in, out;
  KernelCase k{"block_helper.cu volume_scale3d",
               dim3((nx + 7) / 8, (ny + 7) / 8, (nz + 3) / 4), dim3(8, 8, 4)};
  k.reset = [&] { in = ramp(nx * ny * nz, 1.f); out.assign(in.size(), 0.f); };
  SMPART_CASE(block_helper, volume_scale3d, in.data(), out.data(), nx, ny, nz,
              1.5f);
  k.outputs = [&] { return asDoubles(out); };
  run(k);
}

} // namespace
