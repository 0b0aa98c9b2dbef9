// Device side of smpart: what code rewritten by smpart-transform includes.
//
// A transformed kernel looks like this (see README.md or lit_tests/):
//
//   __global__ void k(smpart::LaunchControl smpart_ctl, ...) {
//     for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
//       const uint3 blockIdx = smpart_cta.blockIdx();
//       { /* original body */ } smpart_next_block:;
//     }
//   }
//
// This header holds the public part (the CTA loop, smpart::blockIdx(),
// smpart::load); the protocol thread 0 runs is detail/protocol.cuh, and
// everything that differs between a GPU and the CPU emulation is
// detail/device_primitives.cuh.
//
// Each physical CTA loops over chunks of logical blocks. Thread 0 decides
// (takes a chunk, or leaves) and every other thread follows what it wrote
// to shared memory, so a CTA never disagrees with itself. The protocol, its
// cost per logical block and why it cannot hang are in runtime/README.md;
// in short:
//
// * Steady state, per chunk of K logical blocks: one 16-byte L2 read of the
//   device knob line (epoch, slot epoch, last poll time), a %globaltimer
//   and a %smid read and one atomic on the block counter's own cache line
//   (for chunks of more than one block, every other chunk: it claims two
//   chunks, the second waits in shared memory), all by thread 0 before
//   the barrier that ends the chunk, so they overlap the slowest warp.
//   Per logical block: one barrier (shared memory reuse). K adapts so that
//   a chunk lasts about Knobs::chunk_target_ns.
// * Host knobs live in host-mapped memory as a stamped image (every word
//   carries its epoch). Every few microseconds one CTA polls it (one PCIe
//   round trip of asynchronous copies) and, when it holds a newer whole
//   set, writes it to the device copy and then moves the device epoch;
//   every CTA sees the new epoch at its next chunk and reads the words it
//   needs, then the copy's own epoch (copy_epoch): unchanged, it read one
//   whole set. Nobody waits for a publish in progress.
// * Launch: the first CTA initialises the State (State::handshake, one
//   PCIe round trip for the host's knob image); the others wait on one L2
//   word. A launch copies nothing to the device, and no other CTA reads
//   host memory to start.
// * Ordering: nothing that says a block is finished (State::blocks_done,
//   the CTA's SM slot, first_live, Notices::finished) is written before
//   the barrier after the CTA's last block. Thread 0 decides before that
//   barrier only to take the next chunk; a decision that gives something
//   back is settled after it (kSettle), at the cost of a second barrier,
//   once per CTA lifetime or knob change.
// * Finished blocks are counted locally and added to State::blocks_done
//   once, with release semantics, when the CTA leaves.
// * Acknowledgement: the polling CTA reports a knob epoch in
//   Notices::acked_epoch once no CTA holds an SM slot the epoch forbids; a
//   CTA that claims a slot re-reads the epoch after a fence and gives the
//   slot back if a publish raced with it. A controller hands SMs taken from
//   one kernel to another only after this, so spatial partitions stay
//   disjoint on the device, not only in the host's knobs.
// * Liveness: the CTAs of the first instance (the one on the user's stream)
//   count themselves out; the last one never leaves while blocks remain. It
//   parks (polling with back-off), takes blocks again when allowed, waits
//   for relaunched CTAs to finish theirs, and only then exits, so the
//   kernel finishes by itself and the user's stream order is the kernel's
//   own. If nothing else can run and its own SM is not allowed, it runs
//   outside its allocation after Knobs::stall_grace_ns and reports a stall.
// * No static shared memory: the decisions live in the last kTailBytes of
//   the dynamic shared memory, which the runtime adds to each launch; the
//   user's dynamic base and alignment are unchanged.
#pragma once

#include "smpart/detail/protocol.cuh"

namespace smpart {
namespace detail {

/// One physical CTA of a transformed kernel. `Publish`: device functions
/// of the kernel read smpart::blockIdx(), so each logical block is
/// published in shared memory behind a second barrier.
template <bool Publish> class BasicCta {
public:
  __device__ explicit BasicCta(const LaunchControl &ctl) : ctl_(ctl) {}

  /// Ends the current logical block and starts the next one. Returns
  /// false, uniformly across the CTA, when the CTA must leave.
  __device__ bool next() {
    noteBlockBoundary();
    Tail &t = tail();
    if (remaining_ > 1) {
      --remaining_;
      advance();
      __syncthreads(); // the previous block is done with shared memory
      publish(t);
      return true;
    }
    // The first decision of a CTA is settled at once (no block ran yet:
    // nothing to order). A decision marked kSettle is settled after the
    // barrier, when every thread's part of the last block is complete; it
    // goes to the other buffer, since this one may still be read by slower
    // threads. One call site each for decide() and settle(): inlined twice,
    // the protocol would cost some kernels 7 registers.
    bool settle = !started_;
    ChunkDecision d;
    for (;;) {
      if (isThreadZero()) {
        Protocol p(ctl_, t);
        if (!started_)
          p.start();
        if (settle)
          p.settle(cur_ ^ 1u);
        else
          p.decide(cur_ ^ 1u);
      }
      started_ = true;
      __syncthreads(); // the previous block is done; the decision is visible
      cur_ ^= 1u;
      d = t.chunk[cur_];
      if (!(d.flags & kSettle))
        break;
      settle = true;
    }
    if (!(d.flags & kGo))
      return false;
    remaining_ = d.count;
    bypass_ = (d.flags & kBypass) != 0;
    block_ = split(d.base);
    publish(t);
    return true;
  }

  __device__ uint3 blockIdx() const { return block_; }
  __device__ dim3 gridDim() const {
    return dim3(ctl_.grid_x, ctl_.grid_y, ctl_.grid_z);
  }
  /// This CTA's 1-bit tag: its loads through global pointers bypass L1.
  __device__ bool bypass() const { return bypass_; }

private:
  /// Logical block number -> (x, y, z). Every thread does this once per
  /// chunk: a multiply-high and a shift per extent (the host's
  /// BlockDivisor) instead of 64-bit divisions, which are subroutines of
  /// ~70 instructions each; 64-bit only for grids of 2^31 blocks or more.
  __device__ uint3 split(unsigned long long base) const {
    if (ctl_.total_blocks < (1ull << 31)) {
      const unsigned n = static_cast<unsigned>(base);
      const unsigned yz = divide(n, ctl_.div_x);
      const unsigned z = divide(yz, ctl_.div_y);
      return make_uint3(n - yz * ctl_.grid_x, yz - z * ctl_.grid_y, z);
    }
    const unsigned long long yz = base / ctl_.grid_x;
    const unsigned long long z = yz / ctl_.grid_y;
    return make_uint3(static_cast<unsigned>(base - yz * ctl_.grid_x),
                      static_cast<unsigned>(yz - z * ctl_.grid_y),
                      static_cast<unsigned>(z));
  }

  __device__ static unsigned divide(unsigned n, BlockDivisor v) {
    return v.mul == 0 ? n : __umulhi(n, v.mul) >> v.shr;
  }

  /// The next block of the chunk: x, then y, then z, without division.
  __device__ void advance() {
    if (++block_.x < ctl_.grid_x)
      return;
    block_.x = 0;
    if (++block_.y < ctl_.grid_y)
      return;
    block_.y = 0;
    ++block_.z;
  }

  __device__ void publish(Tail &t) {
    if (!Publish)
      return;
    if (isThreadZero()) {
      t.block[0] = block_.x;
      t.block[1] = block_.y;
      t.block[2] = block_.z;
    }
    __syncthreads();
  }

  LaunchControl ctl_;
  uint3 block_{};
  unsigned remaining_ = 0;
  unsigned cur_ = 1;
  bool started_ = false;
  bool bypass_ = false;
};

/// What smpart-transform instantiates: kernels whose device functions read
/// no logical block index, and those that do.
using Cta = BasicCta<false>;
using PublishingCta = BasicCta<true>;

} // namespace detail

/// The logical block index, for device functions called from a transformed
/// kernel (the kernel body itself sees a local `blockIdx`). The kernel uses
/// detail::PublishingCta, which keeps it current.
__device__ __forceinline__ uint3 blockIdx() {
  const detail::Tail &t = detail::tail();
  return make_uint3(t.block[0], t.block[1], t.block[2]);
}

/// The logical grid, for device functions called from a transformed kernel.
__device__ __forceinline__ dim3 gridDim() {
  const detail::Tail &t = detail::tail();
  return dim3(t.grid[0], t.grid[1], t.grid[2]);
}

/// A load through a pointer into global memory. A tagged CTA reads through
/// L2 only (ld.global.cg), an untagged one loads normally.
template <class T> __device__ __forceinline__ T load(const T *p, bool bypass) {
  return detail::loadGlobal<false>(p, bypass);
}

/// A load through a `const T *__restrict__` kernel parameter (the tool
/// emits it for those): the data is read-only for the whole kernel, as the
/// original's declaration promises, so the untagged path keeps nvcc's
/// non-coherent load (ld.global.nc).
template <class T>
__device__ __forceinline__ T load_ro(const T *p, bool bypass) {
  return detail::loadGlobal<true>(p, bypass);
}

} // namespace smpart
