// Device side of smpart: what code rewritten by smpart-transform includes.
//
// A transformed kernel looks like this (see tool/README or lit_tests/):
//
//   __global__ void k(smpart::LaunchControl smpart_ctl, ...) {
//     for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
//       const uint3 blockIdx = smpart_cta.blockIdx();
//       const dim3 gridDim = smpart_cta.gridDim();
//       { /* original body */ } smpart_next_block:;
//     }
//   }
//
// Each physical CTA loops over logical blocks. Cta::next() is the only place
// where a CTA synchronises with the runtime; every decision it makes is taken
// by thread 0 and broadcast through shared memory, so all threads of a CTA
// agree (the SiM paper's Fig. 5 lets each thread read the knobs on its own
// and overwrites the shared logical index while others may still read it;
// here both barriers below close those races).
#pragma once

#include "smpart/control.hpp"

#include <type_traits>
#include <utility>

#if defined(SMPART_EMULATION)
// The CPU emulation supplies CUDA's built-ins and these hooks.
#include "smpart/detail/emulation_hooks.hpp"
#endif

namespace smpart {
namespace detail {

/// The SM this thread runs on (PTX %smid; the CD-search paper's Listing 1).
__device__ __forceinline__ unsigned smid() {
#if defined(SMPART_EMULATION)
  return emulation::smid();
#else
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#endif
}

/// What thread 0 decided for the next logical block. Plain fields only:
/// __shared__ variables cannot have constructors.
struct Decision {
  unsigned block_x, block_y, block_z;
  unsigned grid_x, grid_y, grid_z;
  int go;     ///< 1: run block_*, 0: this CTA leaves
  int bypass; ///< this CTA's L1-bypass tag for the block
};

/// The CTA's current decision. Device functions that read blockIdx/gridDim
/// in rewritten files read them from here (smpart::blockIdx()).
__device__ inline Decision &currentDecision() {
  __shared__ Decision decision;
  return decision;
}

__device__ __forceinline__ bool isThreadZero() {
  return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}

/// Bits [0, n) set; n >= 32 gives all bits.
__device__ __forceinline__ unsigned lowBits(unsigned n) {
  return n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
}

/// One physical CTA of a transformed kernel. Only thread 0's copy of the
/// slot fields is meaningful; the other threads follow its broadcast.
class Cta {
public:
  __device__ explicit Cta(const LaunchControl &ctl)
      : ctl_(ctl), sm_(smid()) {}

  /// Finishes the previous logical block (if any) and takes the next one.
  /// Returns false, uniformly across the CTA, when the CTA must leave: the
  /// grid is exhausted, the kernel is preempted, its SM left the mask, or
  /// the SM has more CTAs of this kernel than allowed.
  __device__ bool next() {
#if defined(SMPART_EMULATION)
    emulation::blockBoundary();
#endif
    Decision &shared = currentDecision();
    // Thread 0 issues its knob reads before the barrier: their latency (a
    // PCIe round trip for host-mapped knobs) overlaps the wait for the
    // slowest warp of the block instead of adding to it.
    Snapshot seen{};
    if (isThreadZero())
      seen = snapshot();
    __syncthreads(); // every thread is done with the previous block
    if (isThreadZero()) {
      if (hasBlock_)
        countDone();
      shared = decide(seen);
#if defined(SMPART_EMULATION)
      emulation::decided(sm_, slot_, shared.go, shared.block_x, shared.block_y,
                         shared.block_z, shared.bypass);
#endif
    }
    __syncthreads(); // the decision is published
    const Decision d = shared;
    hasBlock_ = d.go != 0;
    block_ = make_uint3(d.block_x, d.block_y, d.block_z);
    bypass_ = d.bypass != 0;
    return hasBlock_;
  }

  __device__ uint3 blockIdx() const { return block_; }
  __device__ dim3 gridDim() const {
    return dim3(ctl_.grid_x, ctl_.grid_y, ctl_.grid_z);
  }
  /// This CTA's 1-bit tag: its loads through global pointers bypass L1.
  __device__ bool bypass() const { return bypass_; }

private:
  /// Thread 0 only. Counts the finished block with release semantics: the
  /// block's writes (by every thread: the barrier before is cumulative) are
  /// visible before the host or the join can see the count.
  __device__ void countDone() {
#if defined(SMPART_EMULATION)
    __threadfence();
    atomicAdd(&ctl_.state->blocks_done, 1ull);
#else
    // One release reduction instead of a full fence plus an atomic; the
    // result is not needed, so thread 0 does not wait for it.
    asm volatile("red.release.gpu.global.add.u64 [%0], 1;"
                 :
                 : "l"(&ctl_.state->blocks_done)
                 : "memory");
#endif
  }

  /// The knobs and this SM's slot word, read together (one round trip).
  struct Snapshot {
    unsigned preempt, maskWord, allowed, bypass, slots;
  };
  __device__ Snapshot snapshot() const {
    const volatile Knobs &k = *ctl_.knobs;
    Snapshot s;
    s.preempt = k.preempt;
    s.maskWord = k.sm_mask[(sm_ % kMaxSms) / 32];
    s.allowed = k.ctas_per_sm;
    s.bypass = k.bypass_ctas_per_sm;
    s.slots = slot_ < 0 ? 0u
                        : *static_cast<volatile unsigned *>(
                              &ctl_.state->sm_slots[sm_ % kMaxSms]);
    return s;
  }

  /// Thread 0 only: the per-logical-block hot path. Besides the snapshot,
  /// one atomic takes the block.
  __device__ Decision decide(const Snapshot &k) {
    Decision d{};
    d.grid_x = ctl_.grid_x;
    d.grid_y = ctl_.grid_y;
    d.grid_z = ctl_.grid_z;
    const bool inMask = sm_ < kMaxSms && ((k.maskWord >> (sm_ % 32)) & 1u);
    if (slot_ < 0) {
      if (k.preempt || !inMask || !claimSlot(k.allowed))
        return d;
    } else {
      if (k.preempt || !inMask) {
        releaseSlot();
        return d;
      }
      compactSlot(k.slots);
      if (static_cast<unsigned>(slot_) >= k.allowed) {
        releaseSlot();
        return d;
      }
    }
    const unsigned long long b = atomicAdd(&ctl_.state->next_block, 1ull);
    if (b >= ctl_.total_blocks) {
      releaseSlot();
      return d;
    }
    // The SiM paper's early notification: once the last block is taken no
    // change of CTAs can help this kernel any more.
    if (b + 1 == ctl_.total_blocks && ctl_.notices)
      ctl_.notices->last_block_taken = 1u;
    const unsigned long long plane =
        static_cast<unsigned long long>(ctl_.grid_x) * ctl_.grid_y;
    d.block_x = static_cast<unsigned>(b % ctl_.grid_x);
    d.block_y = static_cast<unsigned>((b / ctl_.grid_x) % ctl_.grid_y);
    d.block_z = static_cast<unsigned>(b / plane);
    d.go = 1;
    d.bypass = static_cast<unsigned>(slot_) < k.bypass;
    return d;
  }

  /// Takes the lowest free slot below `allowed` on this SM.
  __device__ bool claimSlot(unsigned allowed) {
    unsigned *word = &ctl_.state->sm_slots[sm_];
    unsigned old = atomicAdd(word, 0u);
    for (;;) {
      const unsigned free = ~old & lowBits(allowed);
      if (free == 0)
        return false;
      const int bit = __ffs(free) - 1;
      const unsigned seen = atomicCAS(word, old, old | (1u << bit));
      if (seen == old) {
        slot_ = bit;
        atomicAdd(&ctl_.state->resident_ctas, 1u);
        return true;
      }
      old = seen;
    }
  }

  /// Moves to a lower free slot if one opened, so that slots stay dense:
  /// the tag rule "slot < bypass count" then tags exactly that many CTAs.
  __device__ void compactSlot(unsigned old) {
    unsigned *word = &ctl_.state->sm_slots[sm_];
    const unsigned free = ~old & lowBits(static_cast<unsigned>(slot_));
    if (free == 0)
      return;
    const int bit = __ffs(free) - 1;
    const unsigned moved = (old & ~(1u << slot_)) | (1u << bit);
    if (atomicCAS(word, old, moved) == old)
      slot_ = bit;
  }

  __device__ void releaseSlot() {
    atomicAnd(&ctl_.state->sm_slots[sm_], ~(1u << slot_));
    atomicSub(&ctl_.state->resident_ctas, 1u);
    slot_ = -1;
  }

  LaunchControl ctl_;
  uint3 block_{};
  bool hasBlock_ = false;
  bool bypass_ = false;
  int slot_ = -1;    // thread 0: slot held on sm_, -1 if none
  unsigned sm_;      // SM this CTA runs on
};

template <class T, class = void> struct HasLdcg : std::false_type {};
template <class T>
struct HasLdcg<T, std::void_t<decltype(__ldcg(std::declval<const T *>()))>>
    : std::true_type {};

} // namespace detail

/// The logical block index, for device functions called from a transformed
/// kernel (the kernel body itself sees a local `blockIdx`).
__device__ __forceinline__ uint3 blockIdx() {
  const detail::Decision &d = detail::currentDecision();
  return make_uint3(d.block_x, d.block_y, d.block_z);
}

/// The logical grid, for device functions called from a transformed kernel.
__device__ __forceinline__ dim3 gridDim() {
  const detail::Decision &d = detail::currentDecision();
  return dim3(d.grid_x, d.grid_y, d.grid_z);
}

/// A load through a pointer into global memory. A tagged CTA reads through
/// L2 only (ld.global.cg), an untagged one loads normally. Types __ldcg does
/// not cover (structs) always load normally.
template <class T>
__device__ __forceinline__ T load(const T *p, bool bypass) {
#if defined(SMPART_EMULATION)
  detail::emulation::recordLoad(bypass);
  return *p;
#else
  if constexpr (detail::HasLdcg<T>::value) {
    if (bypass)
      return __ldcg(p);
  }
  return *p;
#endif
}

} // namespace smpart
