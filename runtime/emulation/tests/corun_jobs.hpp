// The co-run tests' kernels (tests/kernels/reduce.smpart.cu: rowSums,
// profiled as the compute-bound kind, and smooth3d, the memory-bound kind;
// tests/corun_profiles.json) as jobs: one launch's inputs and outputs, the
// original kernel's outputs, and the rewritten kernel as a CoKernel.
#pragma once

#include "emulation_harness.hpp"

#include <numeric>
#include <vector>

namespace corun_orig_reduce {
void rowSums(const float *in, float *out, float *total, int width, int height);
void smooth3d(const float *in, float *out, int nx, int ny, int nz);
} // namespace corun_orig_reduce
namespace corun_xf_reduce {
void rowSums(smpart::LaunchControl, const float *in, float *out, float *total,
             int width, int height);
void smooth3d(smpart::LaunchControl, const float *in, float *out, int nx,
              int ny, int nz);
} // namespace corun_xf_reduce

namespace smpart::emu::corun {

/// One launch's data: inputs, outputs, the original's outputs.
struct Job {
  virtual ~Job() = default;
  virtual void reset() = 0;
  virtual void original() = 0;
  virtual CoKernel make() = 0;
  virtual std::vector<double> outputs() = 0;
  std::vector<double> want;
};

struct RowSumsJob : Job {
  static constexpr int kWidth = 320;
  /// 5 x 24 = 120 blocks at scale 1.
  explicit RowSumsJob(int Scale) : kHeight(24 * Scale) {}
  const int kHeight;
  std::vector<float> in, out;
  float total = 0;
  void reset() override {
    in.resize(kWidth * kHeight);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<float>(i % 13); // integers: sums are exact
    out.assign(((kWidth + 63) / 64) * kHeight, -1.f);
    total = 0;
  }
  void original() override {
    corun_orig_reduce::rowSums(in.data(), out.data(), &total, kWidth, kHeight);
  }
  CoKernel make() override {
    CoKernel k;
    k.name = "rowSums";
    k.grid = dim3((kWidth + 63) / 64, kHeight);
    k.block = dim3(64);
    k.occupancy = 2;
    k.body = [this](const LaunchControl &c) {
      corun_xf_reduce::rowSums(c, in.data(), out.data(), &total, kWidth,
                               kHeight);
    };
    return k;
  }
  std::vector<double> outputs() override {
    auto v = asDoubles(out);
    v.push_back(total);
    return v;
  }
};

struct Smooth3dJob : Job {
  static constexpr int kNx = 96, kNy = 8;
  /// 3 x 8 x 6 = 144 blocks at scale 1.
  explicit Smooth3dJob(int Scale) : kNz(6 * Scale) {}
  const int kNz;
  std::vector<float> in, out;
  void reset() override {
    in.resize(kNx * kNy * kNz);
    std::iota(in.begin(), in.end(), 1.f);
    out.assign(in.size(), 0.f);
  }
  void original() override {
    corun_orig_reduce::smooth3d(in.data(), out.data(), kNx, kNy, kNz);
  }
  CoKernel make() override {
    CoKernel k;
    k.name = "smooth3d";
    k.grid = dim3((kNx + 31) / 32, kNy, kNz);
    k.block = dim3(32);
    k.occupancy = 3;
    k.body = [this](const LaunchControl &c) {
      corun_xf_reduce::smooth3d(c, in.data(), out.data(), kNx, kNy, kNz);
    };
    return k;
  }
  std::vector<double> outputs() override { return asDoubles(out); }
};

/// Runs \p J's original on the emulator (its barriers are fibers'), keeps
/// its outputs as J.want and resets J for the rewritten run.
inline Report prepare(Job &J) {
  J.reset();
  const CoKernel K = J.make();
  const Report R = runOriginal(K.grid, K.block, [&J] { J.original(); });
  J.want = J.outputs();
  J.reset();
  return R;
}

} // namespace smpart::emu::corun
