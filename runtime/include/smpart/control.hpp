// Layout shared by the host runtime and the device code that
// smpart-transform generates. Plain C++ (no CUDA), so that the host
// library, the CPU emulation and the device header agree on one definition.
#pragma once

#include <cstdint>

namespace smpart {

/// Largest SM id a mask can name. An H200 has 132 SMs; 256 leaves headroom.
inline constexpr unsigned kMaxSms = 256;
/// Hardware limit of resident CTAs per SM on every CUDA GPU so far (32);
/// per-SM slot occupancy is one 32-bit word.
inline constexpr unsigned kMaxCtasPerSm = 32;

/// Knobs written by the host while the kernel runs and read by thread 0 of
/// each CTA between logical blocks. The host runtime keeps them in
/// host-mapped (zero-copy) memory: a host store becomes visible to the GPU
/// within the PCIe round trip, without a stream operation that could queue
/// behind the kernel itself.
struct Knobs {
  std::uint32_t sm_mask[kMaxSms / 32]; ///< bit s set: SM s may run CTAs
  std::uint32_t ctas_per_sm;           ///< allowed CTAs of this kernel per SM
  std::uint32_t bypass_ctas_per_sm;    ///< CTAs per SM whose loads bypass L1
  std::uint32_t preempt;               ///< nonzero: every CTA yields
  std::uint32_t reserved;
};

/// Progress and occupancy written by the device with atomics (device memory).
struct State {
  unsigned long long next_block;  ///< logical blocks taken (may overshoot)
  unsigned long long blocks_done; ///< logical blocks finished
  std::uint32_t sm_slots[kMaxSms]; ///< bit k: slot k on that SM is occupied
  std::uint32_t resident_ctas;     ///< CTAs currently holding a slot
  std::uint32_t reserved;
};

/// Written by the device at most once per launch, read by the host without a
/// CUDA call: lives in host-mapped memory next to the knobs. One store per
/// kernel, so its PCIe cost does not matter.
struct Notices {
  std::uint32_t last_block_taken; ///< nonzero once the last logical block is taken
  std::uint32_t reserved;
};

/// Passed by value as the first parameter of every transformed kernel.
struct LaunchControl {
  const volatile Knobs *knobs;
  State *state;
  volatile Notices *notices;       ///< may be null (no early notification)
  unsigned grid_x, grid_y, grid_z; ///< the logical grid of the original launch
  unsigned long long total_blocks; ///< grid_x * grid_y * grid_z
};

} // namespace smpart
