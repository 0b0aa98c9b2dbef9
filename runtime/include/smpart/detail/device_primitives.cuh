// Hardware access of the device protocol (PTX), or the CPU emulation's
// stand-ins (runtime/emulation/): the one place where the two differ.
// Everything the protocol (protocol.cuh) and the CTA loop (device.cuh) do
// to memory, clocks and SM ids goes through these functions, and what the
// emulation observes (the note* hooks) compiles to nothing on a GPU.
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

/// The SM this thread runs on now (PTX %smid; not dense, read at every
/// decision because a CTA may be moved by compute preemption).
__device__ __forceinline__ unsigned smid() {
#if defined(SMPART_EMULATION)
  return emulation::smid();
#else
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#endif
}

/// An upper bound of %smid (PTX: %smid < %nsmid; not the SM count).
__device__ __forceinline__ unsigned smIdBound() {
#if defined(SMPART_EMULATION)
  return emulation::smIdBound();
#else
  unsigned n;
  asm("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n < kMaxSms ? n : kMaxSms;
#endif
}

/// Orders this thread's accesses to host-mapped memory against later ones
/// as the host sees them (fence.sc.sys).
__device__ __forceinline__ void fenceSystem() {
#if !defined(SMPART_EMULATION)
  __threadfence_system();
#endif
}

/// A GPU-scope acquire-release fence: what a seqlock reader needs between
/// its loads (readKnobs), without the cost of __threadfence (fence.sc),
/// which every CTA of a launch pays at its first decision.
__device__ __forceinline__ void fenceAcqRel() {
#if !defined(SMPART_EMULATION)
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
}

__device__ __forceinline__ unsigned long long globalTimerNs() {
#if defined(SMPART_EMULATION)
  return emulation::globalTimerNs();
#else
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

/// A point between two protocol steps (the emulator may switch CTAs here).
__device__ __forceinline__ void protocolStep() {
#if defined(SMPART_EMULATION)
  emulation::step();
#endif
}

__device__ __forceinline__ void pauseNs(unsigned ns) {
#if defined(SMPART_EMULATION)
  (void)ns;
  emulation::step();
#else
  __nanosleep(ns);
#endif
}

__device__ __forceinline__ unsigned char *dynamicSmemEnd() {
#if defined(SMPART_EMULATION)
  return static_cast<unsigned char *>(emulation::dynamicSmem()) +
         emulation::dynamicSmemSize();
#else
  extern __shared__ __align__(16) unsigned char smpart_dynamic_smem[];
  unsigned size;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(size));
  return smpart_dynamic_smem + size;
#endif
}

/// Device-scope loads that read L2 (never a stale L1 line).
__device__ __forceinline__ unsigned loadRelaxed(const unsigned *p) {
  protocolStep();
  return *static_cast<const volatile unsigned *>(p);
}
__device__ __forceinline__ unsigned long long
loadRelaxed(const unsigned long long *p) {
  protocolStep();
  return *static_cast<const volatile unsigned long long *>(p);
}
__device__ __forceinline__ unsigned long long
loadAcquire(const unsigned long long *p) {
  protocolStep();
#if defined(SMPART_EMULATION)
  return *p;
#else
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];"
               : "=l"(v)
               : "l"(p)
               : "memory");
  return v;
#endif
}
__device__ __forceinline__ unsigned loadAcquire(const unsigned *p) {
  protocolStep();
#if defined(SMPART_EMULATION)
  return *p;
#else
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
#endif
}

/// The value half of a knob image word, read at device scope (L2): 32
/// bits, where the whole word would cost a register more per knob.
__device__ __forceinline__ unsigned loadValue(const unsigned long long *p) {
  protocolStep();
#if defined(SMPART_EMULATION)
  return static_cast<unsigned>(
      *static_cast<const volatile unsigned long long *>(p));
#else
  unsigned v; // little-endian: the low half is the first 4 bytes
  asm volatile("ld.volatile.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
#endif
}

/// The epoch a knob image word was written under, and its value.
__device__ __forceinline__ unsigned stampOf(unsigned long long w) {
  return static_cast<unsigned>(w >> 32);
}
__device__ __forceinline__ unsigned valueOf(unsigned long long w) {
  return static_cast<unsigned>(w);
}

/// Copies the host's knob image (host-mapped) into `stage` in shared
/// memory with system-scope 8-byte loads, each word stored as it arrives:
/// a round trip per word, but every one sees what the host wrote (the
/// memory model's guarantee for .sys). The fallback of fetchHostImage().
/// Rolled, and not in 16-byte vectors: either raises most kernels' register
/// count from 32 to 38-40 (occupancy 8 -> 6 CTAs of 256 threads).
__device__ __forceinline__ void
fetchHostImageStrong(const KnobImage *src, unsigned long long *stage) {
#if defined(SMPART_EMULATION)
  // Vector by vector, so that a host write may land between two of them.
  for (unsigned w = 0; w < kKnobImageWords; w += 2) {
    protocolStep();
    stage[w] = src->word[w];
    stage[w + 1] = src->word[w + 1];
  }
#else
#pragma unroll 1
  for (unsigned w = 0; w < kKnobImageWords; ++w) {
    unsigned long long a;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];"
                 : "=l"(a)
                 : "l"(&src->word[w])
                 : "memory");
    stage[w] = a;
  }
#endif
}

/// Copies the host's knob image into `stage` the fast way: independent
/// 16-byte asynchronous copies, all in flight at once, so the whole image
/// costs one PCIe round trip and no registers (holding 22 words in
/// registers would raise every kernel's register count). Returns the stamp
/// of word 0 as a system-scope load beside them reads it. cp.async is a
/// weak read: nothing in the memory model makes it see the host's latest
/// write (a GPU may serve it from a cached line of system memory), so a
/// copy whose word 0 disagrees with that load, or whose stamps disagree,
/// is read again with fetchHostImageStrong().
__device__ __forceinline__ unsigned fetchHostImage(const KnobImage *src,
                                                   unsigned long long *stage) {
#if defined(SMPART_EMULATION)
  emulation::fetchHostImageWeak(src, stage);
  protocolStep();
  return stampOf(*static_cast<const volatile unsigned long long *>(src->word));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(stage));
#pragma unroll
  for (unsigned w = 0; w < kKnobImageWords; w += 2)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 :
                 : "r"(dst + w * 8u), "l"(&src->word[w])
                 : "memory");
  unsigned stamp; // little-endian: the stamp is word 0's high half
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];"
               : "=r"(stamp)
               : "l"(reinterpret_cast<const unsigned *>(src->word) + 1)
               : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  return stamp;
#else
  // Before sm_80 (no cp.async): 22 round trips, on the polling CTA only.
  fetchHostImageStrong(src, stage);
  return stampOf(stage[0]);
#endif
}

/// The steady-state read: epoch, slot epoch and last poll time, 16 bytes.
struct KnobHead {
  unsigned epoch, slot_epoch;
  unsigned long long last_poll_ns;
};
__device__ __forceinline__ KnobHead loadKnobHead(const DeviceKnobs *k) {
  protocolStep();
  KnobHead h;
#if defined(SMPART_EMULATION)
  h.epoch = k->epoch;
  h.slot_epoch = k->slot_epoch;
  h.last_poll_ns = k->last_poll_ns;
#else
  unsigned lo, hi;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(h.epoch), "=r"(h.slot_epoch), "=r"(lo), "=r"(hi)
               : "l"(k)
               : "memory");
  h.last_poll_ns = (static_cast<unsigned long long>(hi) << 32) | lo;
#endif
  return h;
}

/// Adds the CTA's finished blocks with release semantics: the blocks'
/// writes (by every thread: the barrier before is cumulative) are visible
/// before anyone can see the count.
__device__ __forceinline__ void releaseAdd(unsigned long long *p,
                                           unsigned long long v) {
  protocolStep();
#if defined(SMPART_EMULATION)
  *p += v;
#else
  asm volatile("red.release.gpu.global.add.u64 [%0], %1;"
               :
               : "l"(p), "l"(v)
               : "memory");
#endif
}

/// Adds `v` and returns the value before, with acquire semantics: the
/// thread's later accesses see what the writer of the value it read did
/// before a release (or a fence) that preceded that write.
__device__ __forceinline__ unsigned acquireAdd(unsigned *p, unsigned v) {
  protocolStep();
#if defined(SMPART_EMULATION)
  const unsigned before = *p;
  *p += v;
  return before;
#else
  unsigned before;
  asm volatile("atom.acquire.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(before)
               : "l"(p), "r"(v)
               : "memory");
  return before;
#endif
}

/// Counts a CTA out of `*p` and returns the count before, with acquire and
/// release semantics: what the CTA wrote before (its releaseAdd() of
/// finished blocks, a reduction that may still be in flight) is visible to
/// whoever counts out after it, and the last one out sees it all.
__device__ __forceinline__ unsigned countOut(unsigned *p) {
  protocolStep();
#if defined(SMPART_EMULATION)
  return (*p)--;
#else
  unsigned before;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(before)
               : "l"(p), "r"(~0u)
               : "memory");
  return before;
#endif
}

/// The poll lock: successive holders see each other's writes to the
/// device copy of the knobs (ack_scan_word, strong_fetches), not only
/// where a fence inside happens to order them.
__device__ __forceinline__ bool tryLockAcquire(unsigned *lock) {
  protocolStep();
#if defined(SMPART_EMULATION)
  return atomicCAS(lock, 0u, 1u) == 0u;
#else
  unsigned seen;
  asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], 0, 1;"
               : "=r"(seen)
               : "l"(lock)
               : "memory");
  return seen == 0u;
#endif
}
__device__ __forceinline__ void unlockRelease(unsigned *lock) {
  protocolStep();
#if defined(SMPART_EMULATION)
  atomicExch(lock, 0u);
#else
  asm volatile("st.release.gpu.global.u32 [%0], 0;" : : "l"(lock) : "memory");
#endif
}

// ---- What the emulation observes (nothing on a GPU) -----------------------

/// A CTA's threads reach the end of a logical block (top of Cta::next()).
__device__ __forceinline__ void noteBlockBoundary() {
#if defined(SMPART_EMULATION)
  emulation::blockBoundary();
#endif
}

/// Thread 0 decided: took blocks [base, base + count) (go) or leaves.
__device__ __forceinline__ void noteDecided(unsigned sm, int slot, bool go,
                                            unsigned long long base,
                                            unsigned count, bool bypass,
                                            unsigned epoch, bool outside) {
#if defined(SMPART_EMULATION)
  emulation::decided(sm, slot, go, base, count, bypass, epoch, outside);
#else
  (void)sm, (void)slot, (void)go, (void)base, (void)count, (void)bypass,
      (void)epoch, (void)outside;
#endif
}

/// Thread 0 claimed blocks [base, base + count) for its CTA's next chunk
/// with the current one (Protocol::take, reserve).
__device__ __forceinline__ void noteClaimed(unsigned sm,
                                            unsigned long long base,
                                            unsigned count, unsigned epoch) {
#if defined(SMPART_EMULATION)
  emulation::claimed(sm, base, count, epoch);
#else
  (void)sm, (void)base, (void)count, (void)epoch;
#endif
}

/// Thread 0 is about to say that its CTA's blocks are finished (`what`).
__device__ __forceinline__ void noteGivesBack(const char *what) {
#if defined(SMPART_EMULATION)
  emulation::givesBack(what);
#else
  (void)what;
#endif
}

/// The CTA's SM slot changed (claimed, compacted, or -1: released).
__device__ __forceinline__ void noteSlotChanged(int slot) {
#if defined(SMPART_EMULATION)
  emulation::slotChanged(slot);
#else
  (void)slot;
#endif
}

/// The CTA drew a slot ticket (true), or gave it back without a slot.
__device__ __forceinline__ void noteClaiming(bool claiming) {
#if defined(SMPART_EMULATION)
  emulation::claimingSlot(claiming);
#else
  (void)claiming;
#endif
}

/// An atomic of a slot claim found its slot taken: the claim tries again.
__device__ __forceinline__ void noteClaimRetried() {
#if defined(SMPART_EMULATION)
  emulation::claimRetried();
#endif
}

/// An atomic on the block counter found every block of the grid taken.
__device__ __forceinline__ void noteClaimedPastTheGrid() {
#if defined(SMPART_EMULATION)
  emulation::claimedPastTheGrid();
#endif
}

/// The CTA cleared its slot bit: another CTA may claim the slot now.
__device__ __forceinline__ void noteSlotFreed() {
#if defined(SMPART_EMULATION)
  emulation::slotFreed();
#endif
}

// ---- Loads of the user's data ---------------------------------------------

template <class T, class = void> struct HasLdcg : std::false_type {};
template <class T>
struct HasLdcg<T, std::void_t<decltype(__ldcg(std::declval<const T *>()))>>
    : std::true_type {};

/// A load through a pointer into global memory: through L2 only
/// (ld.global.cg) when `bypass`; otherwise the non-coherent path
/// (ld.global.nc) when `ReadOnly` (the data cannot change during the
/// kernel), else a plain load. Types __ldcg does not cover (structs) always
/// load plainly.
template <bool ReadOnly, class T>
__device__ __forceinline__ T loadGlobal(const T *p, bool bypass) {
#if defined(SMPART_EMULATION)
  emulation::recordLoad(bypass);
  return *p;
#else
  if constexpr (HasLdcg<T>::value) {
    if (bypass)
      return __ldcg(p);
    if constexpr (ReadOnly)
      return __ldg(p);
  }
  return *p;
#endif
}

} // namespace detail
} // namespace smpart
