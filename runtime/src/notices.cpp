// libsmpart host runtime: the launch observer and the notice thread. The
// observer hears of a launch on the launching thread, before the kernel is
// enqueued, so that knobs it sets apply to the first blocks. The notice
// thread turns what the device writes into host memory (the early
// notification, knob acknowledgements, completion) into calls of
// onLastBlockTaken callbacks and of the observer, polling while there is
// something to watch (at the pace of detail/notice_pace.hpp: faster while
// a knob write awaits its acknowledgement) and sleeping otherwise.
// Callbacks run with no runtime lock held, so they may call any smpart
// function, launches included.
#include "kernel.hpp"

#include "smpart/detail/announce.hpp"
#include "smpart/detail/notice_pace.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace smpart {
namespace detail {

namespace {

struct Notifier {
  std::mutex mu;
  std::condition_variable wake;
  std::vector<std::shared_ptr<Kernel>> watched;
  /// Launches whose announcement waits until they are ready, in launch
  /// order, until the notice thread takes them (detail/announce.hpp).
  std::vector<std::shared_ptr<Kernel>> to_announce;
  std::shared_ptr<LaunchObserver> observer;
  bool running = false;
};

/// Ready: the stream reached the kernel (the event before it completed),
/// or a CTA of it ran, or it is done. \p events: CUDA events may be
/// queried in this look (NoticePace::eventsDue).
bool ready(const Kernel &k, bool events) {
  return k.reset || k.finished() || k.notices().started != 0 ||
         (events && eventDone(k.slot->started));
}

/// Never destroyed, like the registry: the thread may outlive main().
Notifier &notifier() {
  static Notifier *n = new Notifier;
  return *n;
}

/// Runs user code (an onLastBlockTaken callback, an observer's call). On
/// the notice thread an exception escaping it would end the process
/// (std::terminate on the thread's way out); on a launching thread it
/// would leave smpart::launch half way. It is reported on stderr, once
/// per call, and the runtime goes on.
template <class F> void runUserCode(const char *what, const Kernel &k, F &&f) {
  try {
    f();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "smpart: %s for kernel '%s' threw: %s; ignored\n",
                 what, k.name.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "smpart: %s for kernel '%s' threw; ignored\n", what,
                 k.name.c_str());
  }
}

bool lastBlockTaken(const Kernel &k, bool events) {
  if (k.reset || k.graph_gone) // its Notices may be another launch's now
    return false;
  return k.opaque ? events && eventDone(k.opaque_done)
                  : k.notices().last_block_taken != 0;
}

/// Done, or nothing more can be known of it: its device was reset, or the
/// graph it was captured into is gone (its control block serves other
/// launches; a replay that ran was seen, and no other will run).
bool done(const Kernel &k, bool events) {
  if (k.reset || k.graph_gone)
    return true;
  if (k.opaque)
    return events && eventDone(k.opaque_done);
  return k.finished() || (events && !k.captured && eventDone(k.slot->done));
}

/// Marks the kernels whose device was reset (Kernel::deviceGone), one
/// lookup per device: before this look queries any of their events.
void markReset(const std::vector<std::shared_ptr<Kernel>> &kernels) {
  ResetLookup lookup;
  for (const auto &k : kernels)
    (void)lookup.gone(*k);
}

void loop() {
#if defined(__linux__)
  // Linux rounds sleeps up by the timer slack (50 us by default), which
  // would put a 50-100 us floor under every reaction: 1 ns for this thread.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  Notifier &n = notifier();
  PendingAnnouncements<std::shared_ptr<Kernel>, StreamQueue> pending;
  NoticePace pace;
  std::uint64_t awaited = 0; // NoticePace::next's summary, last pass
  std::unique_lock<std::mutex> lock(n.mu);
  for (;;) {
    const std::chrono::microseconds period =
        pace.next(NoticePace::Clock::now(), awaited);
    if (period < NoticePace::kIdle) {
      // Polling: a condition variable would wake 5-10 us late.
      lock.unlock();
      for (const auto until = NoticePace::Clock::now() + period;
           NoticePace::Clock::now() < until;)
        std::this_thread::yield();
      lock.lock();
    } else {
      n.wake.wait_for(lock, period);
    }
    if (n.watched.empty())
      n.wake.wait(lock, [&] { return !n.watched.empty(); });
    std::shared_ptr<LaunchObserver> obs = n.observer;
    std::vector<std::shared_ptr<Kernel>> watched = n.watched;
    for (const auto &k : n.to_announce)
      pending.add(k, StreamQueue(*k));
    n.to_announce.clear();
    lock.unlock();

    const bool events = pace.eventsDue(NoticePace::Clock::now());
    if (events)
      markReset(watched);
    // Kernels become ready in their streams' order; each is announced
    // before any other event of it.
    for (const auto &k :
         pending.poll([events](const std::shared_ptr<Kernel> &p) {
           return ready(*p, events);
         })) {
      k->announce_pending = false;
      if (obs)
        runUserCode("onLaunch", *k, [&] { obs->onLaunch(KernelHandle(k)); });
    }

    awaited = 0;
    for (const auto &k : watched) {
      if (k->announce_pending)
        continue;
      const bool isDone = done(*k, events);
      if (obs && !isDone && !k->opaque) {
        if (newlyApplied(k->slot->host->knobs, k->launch_epoch, k->notices(),
                         k->finished(), k->saw_applied_epoch))
          runUserCode("onKnobsApplied", *k,
                      [&] { obs->onKnobsApplied(KernelHandle(k)); });
        else if (const std::uint32_t e =
                     unannouncedEpoch(k->slot->host->knobs, k->launch_epoch,
                                      k->saw_applied_epoch))
          awaited += NoticePace::awaited(k->id, e); // not applied yet
      }
      // A callback may be set after the observer heard of the last block.
      const bool callback =
          k->last_block_callback.load(std::memory_order_acquire);
      if ((!k->saw_last_block || callback) &&
          (isDone || lastBlockTaken(*k, events))) {
        std::function<void()> cb;
        {
          std::lock_guard<std::mutex> klock(k->mu);
          cb = std::move(k->on_last_block);
          k->on_last_block = nullptr;
          k->last_block_callback.store(false, std::memory_order_relaxed);
        }
        // Not for a captured kernel whose graph is gone: no run of it
        // took a last block since it was set (a reset kernel's waiter is
        // told it is over, as by wait()).
        if (cb && !k->graph_gone)
          runUserCode("the onLastBlockTaken callback", *k, cb);
        if (obs && !k->saw_last_block)
          runUserCode("onLastBlockTaken", *k,
                      [&] { obs->onLastBlockTaken(KernelHandle(k)); });
        k->saw_last_block = true;
      }
      if (isDone && !k->saw_done) {
        k->saw_done = true;
        if (obs)
          runUserCode("onDone", *k, [&] { obs->onDone(KernelHandle(k)); });
      }
    }
    watched.clear();

    lock.lock();
    for (std::size_t i = 0; i < n.watched.size();) {
      // Not while a callback waits: it was set after this pass looked.
      if (n.watched[i]->saw_done &&
          !n.watched[i]->last_block_callback.load(std::memory_order_acquire)) {
        n.watched[i] = std::move(n.watched.back());
        n.watched.pop_back();
      } else {
        ++i;
      }
    }
  }
}

void ensureRunningLocked(Notifier &n) {
  if (n.running)
    return;
  n.running = true;
  std::thread(loop).detach();
}

} // namespace

void watch(const std::shared_ptr<Kernel> &k) {
  Notifier &n = notifier();
  std::lock_guard<std::mutex> lock(n.mu);
  for (const auto &w : n.watched)
    if (w == k)
      return;
  if (k->announce_pending && !k->opaque) {
    // The latest launch still watched in this launch's stream (ids grow
    // with each launch) is the one it follows. Two threads launching on
    // one stream at once may take their ids in the other order than their
    // launches: the mark then lands on the later one, whose SMs wait for
    // the next event instead (controller README, "Stream successors").
    const StreamQueue queue(*k);
    Kernel *before = nullptr;
    for (const auto &w : n.watched)
      if (!w->opaque && StreamQueue(*w) == queue &&
          (!before || w->id > before->id))
        before = w.get();
    if (before)
      before->successor_queued.store(true, std::memory_order_release);
  }
  n.watched.push_back(k);
  if (k->announce_pending)
    n.to_announce.push_back(k);
  ensureRunningLocked(n);
  n.wake.notify_one();
}

bool announceLaunch(const std::shared_ptr<Kernel> &k) {
  std::shared_ptr<LaunchObserver> obs;
  {
    Notifier &n = notifier();
    std::lock_guard<std::mutex> lock(n.mu);
    obs = n.observer;
  }
  if (!obs)
    return false;
  // A stream with nothing pending (not capturing: captured launches are
  // not announced) runs the kernel as soon as it is enqueued: announce it
  // now, so that the observer's knobs apply to its first blocks. Behind
  // pending work it could not run yet: the notice thread announces it
  // when the stream reaches it. Opaque kernels take no knobs and are not
  // planned: announced at once.
  // Work on the legacy stream also waits for every blocking stream (CUDA's
  // implicit synchronisation), which a query of it does not show: such a
  // kernel is announced once it is ready. (Stream 0 is the legacy stream
  // here: callerStream() resolved a per-thread default stream already.)
  const bool legacy = k->stream == nullptr || k->stream == cudaStreamLegacy;
  bool idle = k->opaque;
  if (!idle && !legacy) {
    CaptureModeRelaxed relaxed; // as queryEvent(): not this thread's capture
    idle = cudaStreamQuery(k->stream) == cudaSuccess;
  }
  if (announceWhen(k->captured, idle) == AnnounceWhen::kAtLaunch)
    runUserCode("onLaunch", *k, [&] { obs->onLaunch(KernelHandle(k)); });
  else
    k->announce_pending = true; // announced by the notice thread (watch)
  return true;
}

void announceFailedLaunch(const std::shared_ptr<Kernel> &k) {
  std::shared_ptr<LaunchObserver> obs;
  {
    Notifier &n = notifier();
    std::lock_guard<std::mutex> lock(n.mu);
    obs = n.observer;
  }
  k->saw_last_block = k->saw_done = true;
  if (obs && !k->announce_pending) // the observer never heard of it
    runUserCode("onDone", *k, [&] { obs->onDone(KernelHandle(k)); });
}

} // namespace detail

void setLaunchObserver(std::shared_ptr<LaunchObserver> observer) {
  detail::Notifier &n = detail::notifier();
  std::lock_guard<std::mutex> lock(n.mu);
  n.observer = std::move(observer);
}

} // namespace smpart
