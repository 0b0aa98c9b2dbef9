// Property-test harness of the CPU emulation: a table of kernels, each with
// its inputs, its original and rewritten forms, and its outputs. For every
// kernel the original runs once; the rewritten form then runs under many
// seeded schedules and must give the same outputs and keep every property
// the emulator checks. A failing seed is printed; SMPART_EMU_SEED=<n>
// replays just that one, SMPART_EMU_SCHEDULES=<n> changes the count.
#pragma once

#include "smpart_emu/emulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace smpart {
namespace emu {

struct KernelCase {
  KernelCase(std::string name, dim3 grid, dim3 block)
      : name(std::move(name)), grid(grid), block(block) {}
  std::string name;
  dim3 grid, block;
  std::function<void()> reset;    ///< fill inputs, clear outputs
  std::function<void()> original; ///< one thread: call original
  TransformedBody transformed;    ///< one thread: call rewritten
  /// One thread: call the original kernel the rewritten file keeps beside
  /// the rewritten one, which a launch runs under SMPART_DISABLE=1 (empty:
  /// the rewrite keeps none).
  std::function<void()> kept;
  std::function<std::vector<double>()> outputs;
  double tolerance = 0; ///< relative, for float atomics
  std::size_t dynamic_smem = 0;
};

inline unsigned schedulesFromEnv(unsigned fallback) {
  const char *s = std::getenv("SMPART_EMU_SCHEDULES");
  return s ? static_cast<unsigned>(std::strtoul(s, nullptr, 10)) : fallback;
}

/// Config of schedule `seed`: SM count and occupancy vary with the seed;
/// one schedule in four has sparse %smid values spread over 0..263 (nine
/// mask words), as on GPUs whose SM ids are not dense.
inline Config configFor(std::uint64_t seed) {
  Config c;
  c.seed = seed;
  c.num_sms = 1 + static_cast<unsigned>(seed % 6);
  c.occupancy = 1 + static_cast<unsigned>((seed / 6) % 4);
  if (seed % 4 == 3) {
    c.num_sms = 2 + static_cast<unsigned>((seed / 4) % 7);
    c.id_span = 264;
  }
  c.cached_host_reads = seed % 5 == 2;
  c.timer_resolution_ns = seed % 3 == 1 ? 1000 : 0;
  return c;
}

inline std::string compareOutputs(const std::vector<double> &want,
                                  const std::vector<double> &got,
                                  double tolerance) {
  if (want.size() != got.size())
    return "output size differs";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(want[i] - got[i]);
    if (d > tolerance * std::max(1.0, std::fabs(want[i])))
      return "output[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
             ", original gives " + std::to_string(want[i]);
  }
  return "";
}

/// Runs the property test of one kernel; returns the schedules run.
inline unsigned runProperty(const KernelCase &k, unsigned schedules) {
  k.reset();
  const Report orig = runOriginal(k.grid, k.block, k.original, k.dynamic_smem);
  EXPECT_TRUE(orig.ok) << k.name << " (original): " << orig.error;
  const std::vector<double> want = k.outputs();
  if (k.kept) {
    k.reset();
    const Report kept = runOriginal(k.grid, k.block, k.kept, k.dynamic_smem);
    EXPECT_TRUE(kept.ok) << k.name << " (kept original): " << kept.error;
    const std::string diff = compareOutputs(want, k.outputs(), 0);
    EXPECT_EQ(diff, "") << k.name << " (kept original)";
  }
  std::uint64_t first = 1, last = schedules;
  if (const char *s = std::getenv("SMPART_EMU_SEED"))
    first = last = std::strtoull(s, nullptr, 10);
  unsigned ran = 0;
  for (std::uint64_t seed = first; seed <= last; ++seed, ++ran) {
    k.reset();
    Config cfg = configFor(seed);
    cfg.dynamic_smem = k.dynamic_smem;
    const Report r = runTransformed(k.grid, k.block, k.transformed, cfg);
    if (!r.ok) {
      ADD_FAILURE() << k.name << ": " << r.error;
      return ran;
    }
    const std::string diff = compareOutputs(want, k.outputs(), k.tolerance);
    if (!diff.empty()) {
      ADD_FAILURE() << k.name << ": " << diff << " [seed " << seed
                    << "; replay: SMPART_EMU_SEED=" << seed << "]";
      return ran;
    }
  }
  return ran;
}

template <class T> std::vector<double> asDoubles(const std::vector<T> &v) {
  return std::vector<double>(v.begin(), v.end());
}

} // namespace emu
} // namespace smpart
