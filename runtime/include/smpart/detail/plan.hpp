// Host-side arithmetic of libsmpart that needs no CUDA: SM masks, the host
// side of the knob protocol (stamped knob images, acknowledgement) and the size
// of the physical grid. Shared by the runtime and the CPU emulation so
// that the emulation exercises the same decisions.
#pragma once

#include "smpart/control.hpp"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cstdint>
#include <vector>

namespace smpart {

/// A set of SM ids, [0, kMaxSms).
using SmMask = std::bitset<kMaxSms>;

/// The SM ids in `mask`, ascending. The one walk over a mask's bits: the
/// controller's trace and messages, the service protocol and the tests all
/// spell a mask as this list, so they cannot disagree on its order.
inline std::vector<unsigned> smIds(const SmMask &mask) {
  std::vector<unsigned> ids;
  ids.reserve(mask.count());
  for (unsigned s = 0; s < kMaxSms; ++s)
    if (mask.test(s))
      ids.push_back(s);
  return ids;
}

/// SM ids [first, first + count), clipped to kMaxSms. These are raw %smid
/// values; smSet() maps positions onto the ids a GPU really has.
inline SmMask smRange(unsigned first, unsigned count) {
  SmMask m;
  for (unsigned s = first; s < first + count && s < kMaxSms; ++s)
    m.set(s);
  return m;
}

/// The knobs a controller sets in one re-plan, written at once
/// (KernelHandle::setKnobs): the device takes the whole set in one epoch,
/// never a mask of one plan with the CTAs per SM of another.
struct KnobSet {
  SmMask mask;              ///< SMs the kernel may use (not empty)
  unsigned ctas_per_sm = 1; ///< 1..kMaxCtasPerSm
  unsigned bypass_ctas_per_sm = 0;
  bool preempt = false;
  bool operator==(const KnobSet &o) const {
    return mask == o.mask && ctas_per_sm == o.ctas_per_sm &&
           bypass_ctas_per_sm == o.bypass_ctas_per_sm && preempt == o.preempt;
  }
  bool operator!=(const KnobSet &o) const { return !(*this == o); }
};

namespace detail {

/// Writes `mask` into the knob words. Each word is one 32-bit store: a CTA
/// reading meanwhile sees, per SM, either the old or the new bit.
inline void storeMask(volatile Knobs &k, const SmMask &mask) {
  for (unsigned w = 0; w < kMaskWords; ++w) {
    std::uint32_t bits = 0;
    for (unsigned b = 0; b < 32; ++b)
      if (mask.test(w * 32 + b))
        bits |= 1u << b;
    k.sm_mask[w] = bits;
  }
}

/// Writes the knobs a KnobSet holds into `k` (one re-plan step).
inline void storeKnobSet(volatile Knobs &k, const KnobSet &set) {
  storeMask(k, set.mask);
  k.ctas_per_sm = set.ctas_per_sm;
  k.bypass_ctas_per_sm = set.bypass_ctas_per_sm;
  k.preempt = set.preempt ? 1u : 0u;
}

inline SmMask loadMask(const volatile Knobs &k) {
  SmMask m;
  for (unsigned s = 0; s < kMaxSms; ++s)
    if ((k.sm_mask[s / 32] >> (s % 32)) & 1u)
      m.set(s);
  return m;
}

/// Epoch of the knobs of a slot's first launch (even: consistent); any
/// later one was written by a knob call or a later launch.
inline constexpr std::uint32_t kLaunchKnobEpoch = 2;

/// The even epoch after `previous`, for a knob write or for the fresh
/// knobs of the next launch on the slot, whose host knobs last carried
/// `previous`: never 0, which means "none" in Notices. Epochs keep rising
/// across the launches a slot serves (and wrap, compared as signed
/// differences): a GPU may serve the protocol's fast read of the knob
/// image from a line of host memory it cached under an earlier launch, and
/// with epochs that restarted at every launch, that line's stamps could
/// match the new launch's epoch and its knobs be published as this one's.
inline std::uint32_t nextKnobEpoch(std::uint32_t previous) {
  std::uint32_t e = (previous | 1u) + 1u;
  return e == 0 ? kLaunchKnobEpoch : e;
}

/// Knobs of a fresh launch: every SM, `ctas_per_sm` CTAs each, no bypass,
/// the default chunk target and stall grace, epoch `epoch` (even).
inline void initKnobs(volatile Knobs &k, unsigned ctas_per_sm,
                      std::uint32_t epoch = kLaunchKnobEpoch) {
  SmMask all;
  all.set();
  storeMask(k, all);
  k.ctas_per_sm = std::min(ctas_per_sm, kMaxCtasPerSm);
  k.bypass_ctas_per_sm = 0;
  k.preempt = 0;
  k.chunk_target_ns = kDefaultChunkTargetNs;
  k.stall_grace_ns = kDefaultStallGraceNs;
  k.epoch = epoch;
}

/// The value knob word `w` of a KnobImage carries for the set `k`.
inline std::uint32_t knobWord(const volatile Knobs &k, unsigned w) {
  if (w < kMaskWords)
    return k.sm_mask[w];
  switch (w) {
  case kKnobCtasPerSm:
    return k.ctas_per_sm;
  case kKnobBypass:
    return k.bypass_ctas_per_sm;
  case kKnobPreempt:
    return k.preempt;
  case kKnobChunkTarget:
    return k.chunk_target_ns;
  case kKnobStallGrace:
    return k.stall_grace_ns;
  default:
    return 0; // padding to a whole vector
  }
}

/// Stores words [from, to) of the set `k` into `img`, each stamped with
/// k.epoch, one 64-bit store each. A whole image is written with the
/// default range; the emulation writes one in two parts so that a reader
/// meets a write half done.
inline void storeKnobImage(KnobImage &img, const volatile Knobs &k,
                           unsigned from = 0, unsigned to = kKnobImageWords) {
  const unsigned long long stamp = static_cast<unsigned long long>(k.epoch)
                                   << 32;
  for (unsigned w = from; w < to && w < kKnobImageWords; ++w)
    *static_cast<volatile unsigned long long *>(&img.word[w]) =
        stamp | knobWord(k, w);
}

/// Reads a whole set from `img` into `out`; false, with `out` unchanged,
/// if its words carry different epochs (a write in progress).
inline bool loadKnobImage(const KnobImage &img, Knobs &out) {
  unsigned long long w[kKnobImageWords];
  for (unsigned i = 0; i < kKnobImageWords; ++i)
    w[i] = *static_cast<const volatile unsigned long long *>(&img.word[i]);
  const std::uint32_t epoch = static_cast<std::uint32_t>(w[0] >> 32);
  for (unsigned i = 1; i < kKnobImageWords; ++i)
    if (static_cast<std::uint32_t>(w[i] >> 32) != epoch)
      return false;
  for (unsigned i = 0; i < kMaskWords; ++i)
    out.sm_mask[i] = static_cast<std::uint32_t>(w[kKnobMask + i]);
  out.ctas_per_sm = static_cast<std::uint32_t>(w[kKnobCtasPerSm]);
  out.bypass_ctas_per_sm = static_cast<std::uint32_t>(w[kKnobBypass]);
  out.preempt = static_cast<std::uint32_t>(w[kKnobPreempt]);
  out.chunk_target_ns = static_cast<std::uint32_t>(w[kKnobChunkTarget]);
  out.stall_grace_ns = static_cast<std::uint32_t>(w[kKnobStallGrace]);
  out.epoch = epoch;
  return true;
}

/// KernelHandle::knobsApplied() for host epoch `epoch`, read after the
/// knob write that made it: the device acknowledged it, or no CTA has
/// started (each reads the host epoch after a system fence behind its
/// `started` store, which this fence pairs with), or the launch finished.
inline bool knobsAppliedAt(const volatile Notices &n, bool finished,
                           std::uint32_t epoch) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (finished || n.started == 0)
    return true;
  // 0: nothing acknowledged yet (epochs are never 0, and rise across a
  // slot's launches: as a signed difference 0 would pass half of them).
  const std::uint32_t acked = n.acked_epoch;
  return acked != 0 && static_cast<std::int32_t>(acked - epoch) >= 0;
}

/// An epoch the device wrote after its time (`when`): the pair, read
/// epoch, time, epoch again; a pair that straddles a new epoch is read
/// again (a few times at most: the device writes at most once per poll,
/// microseconds apart). KernelHandle::acknowledgedAt() reads acked_epoch
/// and acked_ns (a system fence between them on the device, so a time read
/// after the epoch is that epoch's or a later one's); publishedAt() reads
/// published_epoch and published_ns, which the fences of the epoch's
/// acknowledgement order: exact once that epoch is acknowledged.
inline bool readEpochTime(const volatile std::uint32_t &epoch_word,
                          const volatile unsigned long long &when,
                          std::uint32_t &epoch, unsigned long long &device_ns) {
  for (int tries = 0; tries < 4; ++tries) {
    const std::uint32_t e = epoch_word;
    std::atomic_thread_fence(std::memory_order_acquire);
    const unsigned long long t = when;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e == 0)
      return false;
    if (epoch_word == e || tries == 3) {
      epoch = e;
      device_ns = t;
      return true;
    }
  }
  return false;
}

/// The epoch of the knobs `k` if a knob call wrote them (an epoch past
/// `launch`, the launch's own), no write is in progress, and a watcher that
/// last announced `announced` has not announced them yet; 0 otherwise.
inline std::uint32_t unannouncedEpoch(const volatile Knobs &k,
                                      std::uint32_t launch,
                                      std::uint32_t announced) {
  const std::uint32_t e = k.epoch;
  return (e & 1u) || static_cast<std::int32_t>(e - launch) <= 0 ||
                 e == announced
             ? 0u
             : e;
}

/// Whether a watcher that last announced `announced` should announce
/// onKnobsApplied for the knobs `k` of the launch whose own epoch is
/// `launch` now: unannounced, and applied.
inline bool newlyApplied(const volatile Knobs &k, std::uint32_t launch,
                         const volatile Notices &n, bool finished,
                         std::uint32_t &announced) {
  const std::uint32_t e = unannouncedEpoch(k, launch, announced);
  if (e == 0 || !knobsAppliedAt(n, finished, e))
    return false;
  announced = e;
  return true;
}

/// A knob write: `write` changes fields of the host's set `k`, the epoch
/// moves on by 2, and the whole set goes to `img`, the host-mapped image
/// the device polls, in one pass of stamped 64-bit stores: one re-plan is
/// one write that the device takes whole or not at all. Callers serialise
/// writers.
template <class Write> void writeKnobs(Knobs &k, KnobImage &img, Write write) {
  Knobs next = k;
  write(next);
  next.epoch = nextKnobEpoch(k.epoch);
  storeKnobImage(img, next);
  // The image is out before the epoch a watcher reads (newlyApplied), and
  // both before any later read of Notices (knobsAppliedAt pairs with the
  // device's `started` store and fence).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  k = next;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

/// The multiplier and shift that divide numerators below 2^31 by `d`
/// (round-up reciprocal, as CUTLASS's FastDivmod): exact for every such
/// numerator because 2^(31+ceil(log2 d)) / d has 32 bits of precision.
inline BlockDivisor blockDivisor(unsigned d) {
  if (d <= 1)
    return BlockDivisor{0, 0};
  unsigned log2 = 0;
  while ((1ull << log2) < d)
    ++log2;
  const unsigned long long p = 31 + log2;
  return BlockDivisor{static_cast<unsigned>(((1ull << p) + d - 1) / d),
                      static_cast<unsigned>(p - 32)};
}

/// n / d for n < 2^31 with `v` = blockDivisor(d) (the device does the
/// same with __umulhi).
inline unsigned divideBlocks(unsigned n, BlockDivisor v) {
  if (v.mul == 0)
    return n;
  return static_cast<unsigned>((static_cast<unsigned long long>(n) * v.mul) >>
                               32) >>
         v.shr;
}

/// Sets the logical grid of a launch: extents, block count and the
/// divisors the device uses to split a block number into (x, y, z).
inline void setLogicalGrid(LaunchControl &c, unsigned x, unsigned y,
                           unsigned z) {
  c.grid_x = x;
  c.grid_y = y;
  c.grid_z = z;
  c.total_blocks = static_cast<unsigned long long>(x) * y * z;
  c.div_x = blockDivisor(x);
  c.div_y = blockDivisor(y);
}

/// Physical CTAs to launch for a transformed kernel.
///
/// `occupancy` is how many CTAs of the kernel fit on one SM. The hardware
/// block scheduler, not us, picks the SM of each CTA, so we cannot aim CTAs
/// at the SMs of a mask: we launch enough to fill every SM to occupancy,
/// and CTAs that land on an SM outside the mask or on an SM whose target is
/// met exit before taking work (they cost a few microseconds each). Only
/// when every SM is allowed and the target is the occupancy can the grid
/// be cut to the logical block count without starving an allowed SM.
inline unsigned long long physicalCtas(unsigned num_sms, unsigned occupancy,
                                       unsigned ctas_per_sm, bool all_sms,
                                       unsigned long long remaining_blocks) {
  occupancy = std::max(1u, std::min(occupancy, kMaxCtasPerSm));
  const unsigned long long fill =
      static_cast<unsigned long long>(std::max(1u, num_sms)) * occupancy;
  if (all_sms && ctas_per_sm >= occupancy)
    return std::max(1ull, std::min(fill, remaining_blocks));
  return fill;
}

/// CTAs per SM when the kernel's address is unknown (a template the tool
/// could not name): limited by threads and by the block-slot limit only.
inline unsigned occupancyFromThreads(unsigned block_threads,
                                     unsigned max_threads_per_sm,
                                     unsigned max_blocks_per_sm) {
  if (block_threads == 0)
    return 1;
  return std::max(1u, std::min(max_threads_per_sm / block_threads,
                               std::min(max_blocks_per_sm, kMaxCtasPerSm)));
}

} // namespace detail
} // namespace smpart
