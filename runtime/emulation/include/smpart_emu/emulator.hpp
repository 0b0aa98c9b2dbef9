// CPU emulation of transformed kernels: test support, not a product
// feature. Runs a kernel's threads as fibers on the calling thread, CTAs on
// virtual SMs, and (for transformed kernels) a seeded scheduler that
// interleaves CTAs at logical-block boundaries while it preempts, resumes,
// grows, and changes SM masks, CTAs per SM and bypass counts at random.
// It checks the runtime contract as it goes (see Report).
#pragma once

#include "smpart/control.hpp"

#include <cuda_runtime.h> // dim3

#include <cstdint>
#include <functional>
#include <string>

namespace smpart {
namespace emu {

/// A kernel invocation for one thread: calls the kernel with its arguments.
using OriginalBody = std::function<void()>;
using TransformedBody = std::function<void(const LaunchControl &)>;

struct Config {
  std::uint64_t seed = 1;
  unsigned num_sms = 4;       ///< virtual SMs
  unsigned occupancy = 3;     ///< CTAs of the kernel that fit on one SM
  bool chaos = true;          ///< turn knobs / preempt / grow at random
  double knob_rate = 0.15;    ///< chance of a knob action per step
  std::size_t dynamic_smem = 0;
};

struct Report {
  bool ok = true;
  std::string error; ///< first violated property, with the seed
  unsigned long long steps = 0, preemptions = 0, resumes = 0, grows = 0,
                     mask_changes = 0, ctas = 0, tagged_loads = 0,
                     loads = 0, bypass_checks = 0;
};

/// Runs the original kernel: each CTA of `grid` in order, its threads as
/// fibers with a real barrier.
Report runOriginal(dim3 grid, dim3 block, const OriginalBody &body,
                   std::size_t dynamic_smem = 0);

/// Runs a transformed kernel over the logical grid `grid` under the seeded
/// scheduler and checks: every logical block runs exactly once; a CTA takes
/// a block only on an SM in the mask in force, in a slot below the CTAs-per-
/// SM target in force, with no two CTAs in one slot; per SM, CTAs working
/// under the current knobs never exceed the target; the bypass tag of every
/// CTA and load follows its slot, and once the CTAs of an SM have settled
/// the number of tagged CTAs equals min(bypass target, CTAs); at the end no
/// slot is held and the early notification fired.
Report runTransformed(dim3 grid, dim3 block, const TransformedBody &body,
                      const Config &config);

} // namespace emu
} // namespace smpart
