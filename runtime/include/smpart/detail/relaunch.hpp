// When grow()/resume() relaunch CTAs and on which runtime-owned stream.
// CUDA-free: libsmpart (kernel_handle.cpp) and the CPU stream model
// (runtime/emulation/queue/) make the same decisions through these.
#pragma once

#include <cstddef>
#include <vector>

namespace smpart {
namespace detail {

/// Whether new CTAs can help the kernel. Not before its first CTA started:
/// the first instance fills every SM to occupancy (physicalCtas) and each
/// of its CTAs starts under the knobs written by then, so a relaunch could
/// only add CTAs that wait, on a stream, behind whatever the user's stream
/// still runs before the kernel. Not once the last block was taken or the
/// kernel finished: nothing is left to take.
inline bool relaunchUseful(bool started, bool last_block_taken, bool finished) {
  return started && !last_block_taken && !finished;
}

/// Runtime-owned relaunch streams, each lent to one relaunch at a time: a
/// relaunch goes on a stream on which no other relaunch is still in
/// flight, so it never queues behind another kernel's relaunch (one that
/// waits for its own kernel to start, or a persistent instance that holds
/// its stream until its CTAs leave). A new stream is made when every one
/// is busy, up to `cap`; past that the relaunch is not made (relaunches
/// only add speed: the anchor finishes the kernel without them).
///
/// A stream stays lent from acquire() until returned(): the caller
/// enqueues the relaunch and records the stream's idle event outside the
/// lock that guards the pool, and until that record the event still says
/// idle, so a concurrent grow() would otherwise take the same stream and
/// queue behind the persistent relaunch for its whole life.
class RelaunchStreamPool {
public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  explicit RelaunchStreamPool(std::size_t cap = 64) : cap_(cap) {}

  /// The stream for one relaunch of kernel `owner`: the first neither lent
  /// nor busy (its last relaunch completed, `busy(i)` false), now lent;
  /// else size() (the caller creates stream size() and calls added(owner),
  /// which lends it), else kNone when `cap` streams are all busy.
  template <class Busy>
  std::size_t acquire(unsigned long long owner, Busy &&busy) {
    for (std::size_t i = 0; i < owner_.size(); ++i)
      if (!lent_[i] && !busy(i)) {
        owner_[i] = owner;
        lent_[i] = true;
        return i;
      }
    return owner_.size() < cap_ ? owner_.size() : kNone;
  }
  void added(unsigned long long owner) {
    owner_.push_back(owner);
    lent_.push_back(true);
  }
  /// The relaunch on stream `i` is enqueued and its idle event recorded:
  /// busy() answers for the stream from now on. A stream forgotten since
  /// (clear()) is ignored.
  void returned(std::size_t i) {
    if (i < lent_.size())
      lent_[i] = false;
  }
  std::size_t size() const { return owner_.size(); }
  /// The kernel the stream was last lent to (0: none yet).
  unsigned long long owner(std::size_t i) const { return owner_[i]; }
  /// Forgets every stream (their context is gone: cudaDeviceReset).
  void clear() {
    owner_.clear();
    lent_.clear();
  }

private:
  std::size_t cap_;
  std::vector<unsigned long long> owner_;
  std::vector<bool> lent_;
};

} // namespace detail
} // namespace smpart
