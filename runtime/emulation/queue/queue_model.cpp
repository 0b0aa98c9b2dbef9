// The stream/queue model (README.md). One step: the host issues at most one
// launch, the notice thread announces ready kernels, each hardware
// connection advances its head item, CTAs take blocks.
#include "queue_model.hpp"

#include "smpart/detail/announce.hpp"
#include "smpart/detail/preload.hpp"
#include "smpart/detail/relaunch.hpp"

#include <algorithm>
#include <deque>
#include <set>

namespace smpart {
namespace queue {

namespace {

struct Item {
  enum Kind { kKernel, kWait, kWork } kind = kKernel;
  int kernel = -1; // the kernel it belongs to (kWork: -1)
  bool first = false;
  unsigned ctas = 0, placed = 0, resident = 0;
  unsigned work = 0;
  unsigned stream = 0;
  bool complete = false, begun = false;
};

struct Kernel {
  KernelSpec spec;
  unsigned taken = 0;
  bool preempted = false, started = false, announced = false;
  bool finished = false, departed = false;
  int first_item = -1;
  int resume_after = -1; // preempted for this kernel
};

class Model {
public:
  Model(const Config &c, const std::vector<KernelSpec> &l) : c_(c) {
    for (const KernelSpec &s : l) {
      k_.push_back(Kernel{s});
      streams_ = std::max(streams_, s.stream + 1);
    }
    stream_items_.resize(streams_);
    conn_.resize(c_.connections);
    for (const std::string &fn : c_.registered)
      for (const std::string &load : preload_.registerKernel(fn))
        loaded_.insert(load); // never: nothing is launched yet
  }

  Result run() {
    Result r;
    for (r.steps = 0; r.steps < c_.max_steps && fail_.empty(); ++r.steps) {
      progress_ = false;
      host();
      notices();
      for (unsigned c = 0; c < c_.connections; ++c)
        connection(c);
      execute();
      check();
      if (next_launch_ == k_.size() && allComplete())
        break;
      if (!progress_ && fail_.empty())
        fail_ = "deadlock: no progress while work remains (" + blocked() + ")";
    }
    if (fail_.empty() && !allComplete())
      fail_ = "ran out of steps";
    r.ok = fail_.empty();
    r.failure = fail_;
    r.relaunches = relaunches_;
    return r;
  }

private:
  unsigned slotsFree() const {
    unsigned used = 0;
    for (const Item &i : items_)
      used += i.resident;
    return c_.sms * c_.occupancy - used;
  }
  bool anyResident() const {
    for (const Item &i : items_)
      if (i.resident)
        return true;
    return false;
  }
  bool predecessorsComplete(int id) const {
    for (int j : stream_items_[items_[id].stream]) {
      if (j == id)
        return true;
      if (!items_[j].complete)
        return false;
    }
    return true;
  }
  bool streamIdle(unsigned s) const {
    for (int j : stream_items_[s])
      if (!items_[j].complete)
        return false;
    return true;
  }
  /// The stream reached the kernel (the event recorded before it passed).
  bool ready(int k) const {
    const Kernel &K = k_[k];
    return K.first_item >= 0 &&
           (predecessorsComplete(K.first_item) || K.started || K.finished);
  }
  bool allComplete() const {
    for (const Item &i : items_)
      if (!i.complete)
        return false;
    return true;
  }
  int enqueue(Item it) {
    items_.push_back(it);
    const int id = static_cast<int>(items_.size()) - 1;
    stream_items_[it.stream].push_back(id);
    // The driver maps streams onto connections in creation order.
    conn_[it.stream % c_.connections].push_back(id);
    return id;
  }

  void host() {
    if (next_launch_ >= k_.size())
      return;
    Kernel &K = k_[next_launch_];
    const int k = static_cast<int>(next_launch_);
    // libsmpart's preload, before anything of the launch is enqueued. A
    // load under lazy loading synchronises the context: the host waits.
    if (pending_loads_.empty())
      for (const std::string &fn : preload_.beforeLaunch(K.spec.fn))
        if (!loaded_.count(fn))
          pending_loads_.push_back(fn);
    if (!pending_loads_.empty()) {
      if (c_.lazy && anyResident()) {
        host_blocked_ = "host loading " + pending_loads_.front();
        return;
      }
      for (const std::string &fn : pending_loads_) {
        loaded_.insert(fn);
        preload_.loaded(fn);
      }
      pending_loads_.clear();
    }
    host_blocked_.clear();
    progress_ = true;
    ++next_launch_;
    if (K.spec.work_before)
      enqueue(Item{Item::kWork, -1, false, 0, 0, 0, K.spec.work_before,
                   K.spec.stream});
    // libsmpart asks before it enqueues the kernel; the controller it
    // calls sees the kernel enqueued (knobs go into its state image).
    const detail::AnnounceWhen when =
        detail::announceWhen(K.spec.captured, streamIdle(K.spec.stream));
    K.first_item = enqueue(Item{Item::kKernel, k, true, c_.sms * c_.occupancy,
                                0, 0, 0, K.spec.stream});
    if (when == detail::AnnounceWhen::kAtLaunch)
      arrive(k);
    else if (when == detail::AnnounceWhen::kWhenReady)
      pending_.add(k, K.spec.stream);
  }

  void notices() {
    for (int k : pending_.poll([&](int id) { return ready(id); }))
      arrive(k);
    for (std::size_t k = 0; k < k_.size(); ++k)
      if (k_[k].announced && k_[k].finished && !k_[k].departed) {
        k_[k].departed = true;
        progress_ = true;
        depart(static_cast<int>(k));
      }
  }

  // The controller: a newcomer preempts a running kernel, which is resumed
  // when the newcomer is done; the newcomer is grown.
  void arrive(int k) {
    k_[k].announced = true;
    progress_ = true;
    for (std::size_t j = 0; j < k_.size(); ++j)
      if (k_[j].announced && !k_[j].finished && !ready(static_cast<int>(j)) &&
          fail_.empty())
        fail_ = "controller plans for kernel " + std::to_string(j) + " (" +
                k_[j].spec.fn + ") whose stream has not reached it";
    // One preemption at a time: each preempted kernel's anchor keeps a CTA
    // slot, and a chain of them could fill the GPU.
    bool any_preempted = false;
    for (const Kernel &R : k_)
      any_preempted |= R.preempted;
    if (c_.preempt_for_newcomer && !any_preempted)
      for (std::size_t j = 0; j < k_.size(); ++j) {
        Kernel &R = k_[j];
        if (static_cast<int>(j) != k && R.announced && R.started &&
            !R.finished && !R.preempted && R.resume_after < 0) {
          R.preempted = true;
          R.resume_after = k;
          break;
        }
      }
    // A re-plan grows the newcomer and every kernel it did not preempt.
    for (std::size_t j = 0; j < k_.size(); ++j)
      if (k_[j].announced && !k_[j].finished)
        grow(static_cast<int>(j));
  }
  void depart(int k) {
    for (std::size_t j = 0; j < k_.size(); ++j)
      if (k_[j].resume_after == k) {
        k_[j].resume_after = -1;
        k_[j].preempted = false; // resume(): clear, then grow
        grow(static_cast<int>(j));
      }
  }

  // KernelHandle::grow with libsmpart's rules.
  void grow(int k) {
    Kernel &K = k_[k];
    if (K.spec.captured || K.preempted || K.first_item < 0)
      return;
    if (!detail::relaunchUseful(K.started, K.taken >= K.spec.blocks,
                                K.finished))
      return;
    const std::size_t i = pool_.acquire(
        static_cast<unsigned long long>(k) + 1,
        [&](std::size_t j) { return !streamIdle(relaunch_streams_[j]); });
    if (i == detail::RelaunchStreamPool::kNone)
      return;
    if (i == relaunch_streams_.size()) {
      relaunch_streams_.push_back(streams_++);
      stream_items_.emplace_back();
      pool_.added(static_cast<unsigned long long>(k) + 1);
    }
    const unsigned s = relaunch_streams_[i];
    enqueue(Item{Item::kWait, k, false, 0, 0, 0, 0, s});
    enqueue(Item{Item::kKernel, k, false, c_.sms * c_.occupancy, 0, 0, 0, s});
    pool_.returned(i); // the relaunch is on the stream: streamIdle() knows
    ++relaunches_;
  }

  void connection(unsigned c) {
    std::deque<int> &q = conn_[c];
    while (!q.empty() && items_[q.front()].complete)
      q.pop_front();
    if (q.empty())
      return;
    const int id = q.front();
    Item &it = items_[id];
    if (!predecessorsComplete(id))
      return;
    if (it.kind == Item::kWork) {
      progress_ = true;
      if (--it.work == 0)
        it.complete = true;
      return;
    }
    if (it.kind == Item::kWait) {
      if (ready(it.kernel)) {
        it.complete = true;
        progress_ = true;
      }
      return;
    }
    Kernel &K = k_[it.kernel];
    if (!it.begun) {
      if (!loaded_.count(K.spec.fn)) {
        // Lazy loading: the launch synchronises the context first.
        if (c_.lazy && anyResident())
          return;
        loaded_.insert(K.spec.fn);
      }
      it.begun = true;
      progress_ = true;
    }
    for (unsigned free = slotsFree(); free > 0 && it.placed < it.ctas; --free) {
      ++it.placed;
      ++it.resident;
      K.started = true;
      progress_ = true;
    }
    if (it.placed == it.ctas)
      q.pop_front(); // the connection moves on; the kernel runs
  }

  void execute() {
    for (std::size_t id = 0; id < items_.size(); ++id) {
      Item &it = items_[id];
      if (it.kind != Item::kKernel || it.complete || !it.begun)
        continue;
      Kernel &K = k_[it.kernel];
      // The first instance's last CTA is the anchor: it stays while blocks
      // remain, taking none under preemption.
      const unsigned keep = it.first && !K.finished ? 1u : 0u;
      if ((K.preempted || K.finished) && it.resident > keep) {
        it.resident = std::max(keep, 0u);
        progress_ = true;
      }
      if (!K.preempted && !K.finished && it.resident) {
        K.taken = std::min(K.spec.blocks, K.taken + it.resident);
        progress_ = true;
        if (K.taken == K.spec.blocks)
          K.finished = true;
      }
      if (K.finished && it.resident) {
        it.resident = 0;
        progress_ = true;
      }
      if (it.placed == it.ctas && it.resident == 0 &&
          (!it.first || K.finished)) {
        it.complete = true;
        progress_ = true;
      }
    }
  }

  /// No relaunch waits behind work of another kernel on its stream.
  void check() {
    for (unsigned s : relaunch_streams_) {
      int owner = -2;
      for (int j : stream_items_[s]) {
        const Item &it = items_[j];
        if (it.complete)
          continue;
        if (owner == -2)
          owner = it.kernel;
        else if (it.kernel != owner && fail_.empty())
          fail_ = "relaunch of kernel " + std::to_string(it.kernel) + " (" +
                  k_[it.kernel].spec.fn + ") waits behind kernel " +
                  std::to_string(owner) + " (" + k_[owner].spec.fn +
                  ") on relaunch stream " + std::to_string(s);
      }
    }
  }

  std::string blocked() const {
    std::string out = host_blocked_;
    for (std::size_t k = 0; k < k_.size(); ++k)
      if (!k_[k].finished && k_[k].first_item >= 0)
        out += (out.empty() ? "" : "; ") + std::string("kernel ") +
               std::to_string(k) + " (" + k_[k].spec.fn + ") " +
               (k_[k].preempted ? "preempted" : "waiting") + ", " +
               std::to_string(k_[k].taken) + "/" +
               std::to_string(k_[k].spec.blocks);
    return out;
  }

  Config c_;
  std::vector<Kernel> k_;
  std::vector<Item> items_;
  unsigned streams_ = 0;
  std::vector<std::vector<int>> stream_items_;
  std::vector<std::deque<int>> conn_;
  std::vector<unsigned> relaunch_streams_;
  std::size_t next_launch_ = 0;
  std::set<std::string> loaded_;
  std::vector<std::string> pending_loads_;
  std::string host_blocked_, fail_;
  bool progress_ = false;
  unsigned relaunches_ = 0;
  detail::RelaunchStreamPool pool_;
  detail::PendingAnnouncements<int, unsigned> pending_;
  detail::PreloadRegistry<std::string> preload_;
};

} // namespace

Result run(const Config &config, const std::vector<KernelSpec> &launches) {
  return Model(config, launches).run();
}

} // namespace queue
} // namespace smpart
