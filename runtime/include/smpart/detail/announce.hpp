// When the launch observer (a controller) hears of a kernel. CUDA-free:
// libsmpart (launch.cpp, notices.cpp) and the CPU stream model
// (runtime/emulation/queue/) make the same decisions through these.
//
// A controller must plan only for kernels that can run: a program may
// enqueue hundreds of launches ahead on its streams, and a kernel queued
// behind its stream's earlier work gets no SM however it is planned, while
// the SMs planned for it are taken from kernels that run (or, worse, a
// kernel it waits for is preempted in its favour: a deadlock when that
// kernel is resumed only after the newcomer is done). So a kernel is
// announced when it is *ready*: its stream has reached it (nothing the
// user enqueued before it is pending), whether or not SMs are free for its
// CTAs yet (making room is the controller's job).
#pragma once

#include <cstddef>
#include <set>
#include <utility>
#include <vector>

namespace smpart {
namespace detail {

enum class AnnounceWhen {
  kAtLaunch,  ///< now, on the launching thread, before the kernel is enqueued
  kWhenReady, ///< by the notice thread, once the stream reached the kernel
  kNever,     ///< captured into a graph: replays are not launches
};

/// `stream_idle`: the launch stream had nothing pending just before the
/// launch (so the kernel is ready as soon as it is enqueued). Then the
/// observer hears of it before it is enqueued and its knobs apply to the
/// first blocks; otherwise it would plan for a kernel that cannot run.
inline AnnounceWhen announceWhen(bool captured, bool stream_idle) {
  if (captured)
    return AnnounceWhen::kNever;
  return stream_idle ? AnnounceWhen::kAtLaunch : AnnounceWhen::kWhenReady;
}

/// Kernels whose announcement waits until they are ready, in launch order.
/// A stream runs its work in order, so once one of a stream's kernels is
/// not ready the later ones are not either: poll() asks about at most one
/// not-ready kernel per stream (a program that queued 200 launches on one
/// stream costs one event query per poll, not 200).
template <class Id, class StreamKey> class PendingAnnouncements {
public:
  void add(Id id, StreamKey stream) { pending_.emplace_back(id, stream); }
  bool empty() const { return pending_.empty(); }
  std::size_t size() const { return pending_.size(); }

  /// Removes and returns, in launch order, the kernels that are ready now.
  template <class Ready> std::vector<Id> poll(Ready &&ready) {
    std::vector<Id> out;
    std::set<StreamKey> blocked;
    std::size_t keep = 0;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      auto &p = pending_[i];
      if (!blocked.count(p.second) && ready(p.first)) {
        out.push_back(p.first);
        continue;
      }
      blocked.insert(p.second);
      pending_[keep++] = std::move(p);
    }
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(keep),
                   pending_.end());
    return out;
  }

private:
  std::vector<std::pair<Id, StreamKey>> pending_;
};

} // namespace detail
} // namespace smpart
