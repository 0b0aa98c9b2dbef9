// Hooks through which device.cuh talks to the CPU emulation (test support,
// runtime/emulation/). Only included when SMPART_EMULATION is defined; the
// emulator defines these functions.
#pragma once

namespace smpart {
namespace detail {
namespace emulation {

/// The virtual SM the calling emulated thread's CTA was placed on.
unsigned smid();
/// Called by every thread of a CTA at the top of Cta::next(): the emulated
/// scheduler may switch to another CTA and turn knobs here.
void blockBoundary();
/// Called for every load rewritten to smpart::load, with the CTA's tag.
void recordLoad(bool bypass);
/// Called by thread 0 after it decided on the next logical block.
void decided(unsigned sm, int slot, int go, unsigned block_x, unsigned block_y,
             unsigned block_z, int bypass);

} // namespace emulation
} // namespace detail
} // namespace smpart
