// Hooks through which device.cuh talks to the CPU emulation (test support,
// runtime/emulation/). Only included when SMPART_EMULATION is defined; the
// emulator defines these functions.
#pragma once

#include "smpart/control.hpp"

namespace smpart {
namespace detail {
namespace emulation {

/// The virtual SM the calling emulated thread's CTA is on now.
unsigned smid();
/// %nsmid: above every %smid of the emulated GPU.
unsigned smIdBound();
/// Called by every thread of a CTA at the top of Cta::next(): the emulated
/// scheduler may switch to another CTA and turn knobs here.
void blockBoundary();
/// Called by thread 0 between two steps of the protocol (around every
/// access to shared state): the scheduler may run other CTAs and turn knobs
/// before this CTA goes on, as the hardware may.
void step();
/// The weak, fast copy of the host's knob image (cp.async on a GPU) into
/// `stage`. With Config::cached_host_reads it serves the image as its
/// first call saw it, for ever: a GPU may keep a line of system memory.
void fetchHostImageWeak(const KnobImage *src, unsigned long long *stage);
/// Emulated %globaltimer, in nanoseconds.
unsigned long long globalTimerNs();
/// The calling CTA's dynamic shared memory and its size (%dynamic_smem_size).
void *dynamicSmem();
unsigned dynamicSmemSize();
/// Called by thread 0 when its CTA's SM slot changes: claimed, moved down
/// by compaction, or released (-1, once the others can see the hole).
void slotChanged(int slot);
/// Called by thread 0 when its CTA draws a slot ticket (claiming: the
/// slots of its SM may have a hole until it resolves) and when it gives the
/// ticket back without a slot; a claim resolves with slotChanged().
void claimingSlot(bool claiming);
/// Called by thread 0 for each atomic of a slot claim that found its slot
/// taken (Report::claim_retries).
void claimRetried();
/// Called by thread 0 for each atomic on the block counter that found the
/// grid already taken (Report::exhausted_claims).
void claimedPastTheGrid();
/// Called by thread 0 right after its CTA cleared its slot bit, before
/// slotChanged(-1): from here on the slot is another CTA's to claim.
void slotFreed();
/// Called by thread 0 before it makes something say that its CTA's blocks
/// are finished (`what`: blocks_done, its SM slot, first_live, finished):
/// the emulation checks that a barrier completed the CTA's last block first.
void givesBack(const char *what);
/// Called for every load rewritten to smpart::load, with the CTA's tag.
void recordLoad(bool bypass);
/// Called by thread 0 once per decision. `go`: it took logical blocks
/// [base, base + count); `epoch`: the device knob epoch it decided under;
/// `outside`: it took them without a slot, as the anchor of a reported stall.
void decided(unsigned sm, int slot, bool go, unsigned long long base,
             unsigned count, bool bypass, unsigned epoch, bool outside);
/// Called by thread 0 when it claims blocks [base, base + count) for its
/// CTA's next chunk (Protocol::take's reserve), on `sm` under `epoch`: for
/// a co-run, the moment its kernel takes them; decided() for the same base
/// then only checks the decision.
void claimed(unsigned sm, unsigned long long base, unsigned count,
             unsigned epoch);

} // namespace emulation
} // namespace detail
} // namespace smpart
