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
#include <utility>
#include <vector>

namespace smpart {
namespace emu {

/// A kernel invocation for one thread: calls the kernel with its arguments.
using OriginalBody = std::function<void()>;
using TransformedBody = std::function<void(const LaunchControl &)>;

struct Config {
  std::uint64_t seed = 1;
  unsigned num_sms = 4;       ///< virtual SMs
  unsigned occupancy = 3;     ///< CTAs of the kernel that fit on one SM (<= 32)
  /// %smid of SM i is i * id_stride + id_offset (sparse, over several mask
  /// words) instead of i.
  bool sparse_ids = false;
  unsigned id_stride = 1, id_offset = 0;
  /// Nonzero: the %smid values are num_sms distinct ids drawn (from the
  /// seed) in [0, id_span), e.g. 144 SMs over 0..263.
  unsigned id_span = 0;
  /// Host knob writes at given scheduler steps (besides chaos), e.g. a
  /// mask change that strands the anchor.
  std::vector<std::pair<unsigned long long, std::function<void(volatile Knobs &)>>>
      script;
  /// Before the end the controller completes its last write and clears
  /// preemption; false: a preempted kernel stays preempted (and must then
  /// fail as a stall, with only the anchor left).
  bool settle = true;
  bool chaos = true;          ///< turn knobs / preempt / grow at random
  double knob_rate = 0.15;    ///< chance of a knob action per step
  std::size_t dynamic_smem = 0;
};

struct Report {
  bool ok = true;
  std::string error; ///< first violated property, with the seed
  unsigned resident_at_end = 0; ///< CTAs still resident when the run ended
  unsigned long long taken_at_end = 0; ///< State::next_block at the end
  unsigned long long steps = 0, preemptions = 0, resumes = 0, grows = 0,
                     mask_changes = 0, ctas = 0, tagged_loads = 0,
                     loads = 0, chunks = 0, stalls = 0, outside_blocks = 0,
                     bypass_checks = 0; ///< settled-SM tag counts checked
};

/// Runs the original kernel: each CTA of `grid` in order, its threads as
/// fibers with a real barrier.
Report runOriginal(dim3 grid, dim3 block, const OriginalBody &body,
                   std::size_t dynamic_smem = 0);

/// Runs a transformed kernel over the logical grid `grid` under the seeded
/// scheduler, which interleaves CTAs inside the protocol and turns knobs
/// (through the host sequence lock, sometimes leaving a write half done)
/// between any two steps, then stops and lets the kernel finish on the CTAs
/// it has: nothing is relaunched for it, so a kernel that cannot finish by
/// itself fails as a stall. Each device knob epoch must publish exactly
/// what the host wrote under it. Checks on every decision, against the
/// device knobs published under the epoch the CTA decided under: every
/// logical block runs exactly once; a CTA takes blocks only on an SM in the
/// mask, in a slot below the CTAs-per-SM target, held by no other CTA,
/// never under preemption; its bypass tag follows its slot; blocks run
/// outside the allocation only by the anchor, holding no slot, after it saw
/// no CTA holding one, with a stall reported; a settled SM has dense slots
/// and min(bypass, CTAs) tagged. At the end: every block counted done, no
/// slot held, resident_ctas and first_live zero, the anchor reported
/// completion and the early notification fired.
Report runTransformed(dim3 grid, dim3 block, const TransformedBody &body,
                      const Config &config);

} // namespace emu
} // namespace smpart
