// Layout shared by the host runtime and the device code that
// smpart-transform generates. Plain C++ (no CUDA), so that the host
// library, the CPU emulation and the device header agree on one definition.
//
// Three memories, each written by one side:
//   Knobs   host-mapped (a KnobImage), written by the host in one pass,
//           read by one polling CTA at a time (one PCIe round trip, at
//           most once per kPollIntervalNs);
//   State   device memory, the per-launch counters and a copy of the knobs
//           that every CTA reads from L2 at each chunk of logical blocks;
//   Notices host-mapped, written by the device (progress mirror, early
//           notification, completion), read by the host without a CUDA call.
// See runtime/README.md for the protocol and its liveness argument.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smpart {

/// Largest %smid + 1 a mask can name. %smid is neither dense nor bounded by
/// the SM count (PTX only promises it is below %nsmid); 512 covers every
/// GPU so far with room for sparse numbering.
inline constexpr unsigned kMaxSms = 512;
inline constexpr unsigned kMaskWords = kMaxSms / 32;
/// Hardware limit of resident CTAs per SM on every CUDA GPU so far (32);
/// per-SM slot occupancy is one 32-bit word.
inline constexpr unsigned kMaxCtasPerSm = 32;
/// Default target duration of one chunk of logical blocks, and the default
/// time the last CTA of a kernel waits, unable to run, before it runs
/// outside its allocation (a reported stall) rather than hang.
inline constexpr std::uint32_t kDefaultChunkTargetNs = 8000;
inline constexpr std::uint32_t kDefaultStallGraceNs = 200000;
/// How often (ns) the CTAs of a kernel poll the host's knob image, at most.
inline constexpr unsigned long long kPollIntervalNs = 4000;

/// Upper bound of logical blocks taken with one atomic.
inline constexpr std::uint32_t kMaxChunkBlocks = 64;

/// One knob set: what the host decides for a running kernel. The host
/// keeps it as written by the last knob call (KernelHandle::knobs()); the
/// device reads it as a KnobImage.
struct Knobs {
  std::uint32_t sm_mask[kMaskWords]; ///< bit s set: SM id s may run CTAs
  std::uint32_t ctas_per_sm;         ///< allowed CTAs of this kernel per SM
  std::uint32_t bypass_ctas_per_sm;  ///< CTAs per SM whose loads bypass L1
  std::uint32_t preempt;             ///< nonzero: every CTA yields
  std::uint32_t chunk_target_ns;     ///< target chunk duration (0: 1 block)
  std::uint32_t stall_grace_ns;      ///< see kDefaultStallGraceNs
  std::uint32_t epoch;               ///< even; each knob write moves it on by 2
};

/// Where each knob lives among the words of a KnobImage.
enum KnobWord : unsigned {
  kKnobMask = 0, ///< kMaskWords words of SM mask
  kKnobCtasPerSm = kMaskWords,
  kKnobBypass,
  kKnobPreempt,
  kKnobChunkTarget,
  kKnobStallGrace,
  kKnobValues, ///< words that carry a value
};
/// Whole 16-byte vectors: the device reads an image with v2.u64 loads.
inline constexpr unsigned kKnobImageWords = (kKnobValues + 1) / 2 * 2;

/// A knob set as stored where it is read while it may be rewritten: the
/// host's copy in host-mapped memory and the device's copy in State. Each
/// 64-bit word holds one knob value (low half) and the epoch it was written
/// under (high half). Aligned 64-bit stores and loads are single-copy atomic
/// on the CPU, over PCIe and on the GPU, so a reader that finds the same
/// epoch in every word it read has read one whole set: no lock, no retry
/// loop, and a whole image is one pass of independent vector loads (one
/// PCIe round trip for the host's copy). A reader that finds two epochs
/// keeps what it had and reads again later; it never waits for a writer.
struct alignas(16) KnobImage {
  unsigned long long word[kKnobImageWords];
};

/// Dynamic shared memory the runtime adds at the end of every transformed
/// launch: the protocol's decisions, thread 0's state and the landing place
/// of the host's knob image (device.cuh, detail::Tail).
inline constexpr unsigned kTailBytes = 144 + sizeof(KnobImage);

/// The device's knob state. The first 16 bytes are what thread 0 of every
/// CTA reads at every chunk; `copy` is read only when `epoch` moved.
struct alignas(128) DeviceKnobs {
  std::uint32_t epoch;      ///< epoch of the set in `copy` (even)
  std::uint32_t slot_epoch; ///< bumped whenever a CTA releases an SM slot
  /// %globaltimer of the last poll; left at 0 by a poll after which the
  /// published epoch still waits for its acknowledgement (the next poll is
  /// then due at once).
  unsigned long long last_poll_ns;
  std::uint32_t poll_lock; ///< held by the one CTA polling the host
  /// Last epoch every CTA follows (no slot outside it): Notices::acked_epoch.
  std::uint32_t acked_epoch;
  std::uint32_t ack_scan_word; ///< mask word the acknowledgement checks next
  /// Epoch of the set in `copy`, odd while the poller rewrites it: a CTA
  /// that read `epoch`, then the words it needs, then this, and finds it
  /// unchanged read one whole set (a sequence check that never waits: on a
  /// mismatch it keeps what it had and reads again at its next chunk).
  std::uint32_t copy_epoch;
  /// The set published under `epoch`, written before `epoch` moves, as
  /// the host's image (stamped words, as checked whole when it was
  /// fetched; readers check copy_epoch, not the stamps).
  KnobImage copy;
  /// Polls whose fast copy of the host's image was stale or torn and that
  /// read it again at system scope (Notices::strong_fetches).
  std::uint32_t strong_fetches;
  /// %globaltimer of the last read of the host's image: a poll reads it
  /// at most once per kPollIntervalNs and otherwise only scans; polls come
  /// faster while an epoch waits for its acknowledgement (protocol.cuh,
  /// pollIfDue).
  unsigned long long last_read_ns;
};
static_assert(sizeof(DeviceKnobs) == 256, "two cache lines");

/// Per-launch state in device memory. Each hot counter has a cache line of
/// its own. The first CTA of a launch initialises everything before
/// `sm_slots` (the launch handshake, device.cuh), so a launch copies
/// nothing to the device; `sm_slots` and `sm_tickets` are all zero between
/// launches because every CTA releases its slot before it exits. A slot's
/// first launch (and each replay of a captured one) copies a zero State
/// first.
struct State {
  DeviceKnobs knobs;
  alignas(128) unsigned long long next_block; ///< logical blocks taken (may
                                              ///< overshoot)
  alignas(
      128) unsigned long long blocks_done; ///< added by each CTA as it leaves
  /// The launch handshake: (generation << 1) while the CTA that won it
  /// initialises this State, (generation << 1) | 1 once it is ready. A
  /// generation older than a CTA's own means the State is left from an
  /// earlier launch: the CTA that moves it on initialises.
  alignas(128) unsigned long long handshake;
  std::uint32_t resident_ctas; ///< CTAs holding a slot
  std::uint32_t first_live;    ///< CTAs of the first instance not yet gone
  alignas(
      128) std::uint32_t sm_slots[kMaxSms]; ///< bit k: slot k taken on that SM
  /// By SM id: CTAs that hold a slot there or are claiming one. A claimer's
  /// ticket (the count before its own) is the slot it tries first: when
  /// every CTA of an SM claims at once (a launch, a resume), the tickets
  /// are 0, 1, 2, ... and each CTA takes its slot with one atomic, where a
  /// compare-and-swap race on the slot word costs the last of 16 CTAs 16
  /// rounds of L2 round trips (Protocol::claimSlot).
  alignas(128) std::uint32_t sm_tickets[kMaxSms];
};
inline constexpr std::size_t kStateInitBytes = offsetof(State, sm_slots);

/// Written by the device, read by the host without a CUDA call
/// (host-mapped). The progress mirror is refreshed by the CTA that polls
/// the knobs and by the parked anchor CTA; a launch whose `finished` holds
/// its generation is done whatever the mirror says (taken and done are
/// the whole grid, nothing is resident or parked): the anchor writes only
/// `finished` at the end.
///
/// `acked_epoch` is the device's acknowledgement of a knob write: the host
/// epoch e once the device copy holds e and no CTA holds an SM slot that e
/// does not allow (an SM outside the mask, a slot at or above ctas_per_sm,
/// any slot under preemption). From then on no CTA of the kernel takes a
/// block that e forbids, so a controller may give what e took away to
/// another kernel. `started` is written by the launch handshake before it
/// reads the host's knob image (with a system fence between): a host that
/// writes knobs and then, after a fence, still reads started == 0 knows
/// that every CTA will start under its write.
struct Notices {
  std::uint32_t last_block_taken; ///< nonzero once the last block is taken
  std::uint32_t finished; ///< the launch's generation once every block is done
  std::uint32_t parked;   ///< nonzero while the anchor CTA waits for work
  std::uint32_t stalls;   ///< times the anchor ran outside its allocation
  unsigned long long taken;    ///< mirror of State::next_block
  unsigned long long done;     ///< mirror of State::blocks_done
  std::uint32_t resident_ctas; ///< mirror of State::resident_ctas
  std::uint32_t started;       ///< nonzero once a CTA of the launch ran
  std::uint32_t acked_epoch;   ///< see above; 0 until the first acknowledgement
  /// Mirror of DeviceKnobs::strong_fetches: how often the fast copy of the
  /// knobs (cp.async, a weak read) missed a host write. For benchmarks.
  std::uint32_t strong_fetches;
  /// %globaltimer when acked_epoch was written (written before it): the
  /// device-clock end of a knob change, and of a preemption (a preempt
  /// epoch is acknowledged once no CTA holds a slot, i.e. every CTA but
  /// the parked anchor is gone). For benchmarks and traces.
  unsigned long long acked_ns;
  /// %globaltimer when a poll made the host's epoch `published_epoch` the
  /// device copy's, written before that epoch is acknowledged: the device
  /// clock's split of a knob change into the host write to this publish
  /// (polling, the PCIe read) and this publish to the acknowledgement
  /// (CTAs finishing their chunks, the scan). For benchmarks and traces.
  unsigned long long published_ns;
  std::uint32_t published_epoch;
};

/// Passed by value as the first parameter of every transformed kernel.
/// Division by a grid extent d without a divide instruction, for
/// numerators below 2^31: q = umulhi(n, mul) >> shr (mul == 0: d is 1).
/// The host computes it once per launch (detail::blockDivisor).
struct BlockDivisor {
  unsigned mul, shr;
};

struct LaunchControl {
  const KnobImage *knobs;          ///< host-mapped, device address
  State *state;                    ///< device memory
  volatile Notices *notices;       ///< host-mapped, device address
  unsigned grid_x, grid_y, grid_z; ///< the logical grid of the original launch
  unsigned generation;             ///< identifies the launch using `state`
  unsigned long long total_blocks; ///< grid_x * grid_y * grid_z
  unsigned first_instance;         ///< 1: launched on the user's stream
  unsigned first_ctas; ///< CTAs of the first instance (State::first_live)
  /// The host's knob epoch when this instance was launched: its CTAs act
  /// on no older device copy (a relaunch after resume() must not see the
  /// preemption it was launched to end). No PCIe read per CTA.
  unsigned min_epoch;
  unsigned reserved;
  /// Logical block index -> (x, y, z) without division at each chunk;
  /// used when total_blocks < 2^31 (detail::setLogicalGrid).
  BlockDivisor div_x, div_y;
};

/// The rewritten overload of a kernel, picked by its signature from the
/// overload set a bare kernel name is beside the original kept by
/// smpart-transform: `cudaFuncSetAttribute(smpart::rewritten(k), ...)`.
/// Template argument deduction from an overload set keeps the one member
/// whose first parameter is LaunchControl, so the rewrite needs no
/// parameter types, also where they depend on template parameters.
template <class... Params>
constexpr auto rewritten(void (*Kernel)(LaunchControl, Params...))
    -> void (*)(LaunchControl, Params...) {
  return Kernel;
}

/// The original overload of a kernel, for a use of its address that
/// launches it with its original argument list (a graph node, a launch
/// API, a function pointer): smpart-transform writes
/// `(void *)smpart::original(k, k)` for `(void *)k`. The first argument
/// deduces the parameter types from the rewritten overload, as above; the
/// second then converts to a pointer of those types, which only the
/// original is.
template <class... Params>
constexpr auto original(void (*)(LaunchControl, Params...),
                        void (*Kernel)(Params...)) -> void (*)(Params...) {
  return Kernel;
}

} // namespace smpart
