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
class RelaunchStreamPool {
public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  explicit RelaunchStreamPool(std::size_t cap = 64) : cap_(cap) {}

  /// The stream for one relaunch of kernel `owner`: the first whose last
  /// relaunch completed (`busy(i)` false), else size() (the caller creates
  /// stream size() and calls added(owner), or failed() if it cannot), else
  /// kNone when `cap` streams are all busy.
  template <class Busy>
  std::size_t acquire(unsigned long long owner, Busy &&busy) {
    for (std::size_t i = 0; i < owner_.size(); ++i)
      if (!busy(i)) {
        owner_[i] = owner;
        return i;
      }
    return owner_.size() < cap_ ? owner_.size() : kNone;
  }
  void added(unsigned long long owner) { owner_.push_back(owner); }
  std::size_t size() const { return owner_.size(); }
  /// The kernel the stream was last lent to (0: none yet).
  unsigned long long owner(std::size_t i) const { return owner_[i]; }
  /// Forgets every stream (their context is gone: cudaDeviceReset).
  void clear() { owner_.clear(); }

private:
  std::size_t cap_;
  std::vector<unsigned long long> owner_;
};

} // namespace detail
} // namespace smpart
