// libsmpart host runtime: the launch observer and the notice thread. The
// observer hears of a launch on the launching thread, before the kernel is
// enqueued, so that knobs it sets apply to the first blocks. The notice
// thread turns what the device writes into host memory (the early
// notification, knob acknowledgements, completion) into calls of
// onLastBlockTaken callbacks and of the observer, polling every ~50 us
// while there is something to watch and sleeping otherwise. Callbacks run with no runtime lock held, so they
// may call any smpart function, launches included.
#include "kernel.hpp"

#include <chrono>

namespace smpart {
namespace detail {

namespace {

struct Notifier {
  std::mutex mu;
  std::condition_variable wake;
  std::vector<std::shared_ptr<Kernel>> watched;
  std::shared_ptr<LaunchObserver> observer;
  bool running = false;
};

/// Never destroyed, like the registry: the thread may outlive main().
Notifier &notifier() {
  static Notifier *n = new Notifier;
  return *n;
}

bool lastBlockTaken(const Kernel &k) {
  if (k.reset)
    return false;
  return k.opaque ? eventDone(k.opaque_done)
                  : k.notices().last_block_taken != 0;
}

bool done(const Kernel &k) {
  if (k.reset)
    return true;
  return k.opaque ? eventDone(k.opaque_done)
                  : (k.finished() || (!k.captured && eventDone(k.slot->done)));
}

void loop() {
  Notifier &n = notifier();
  std::unique_lock<std::mutex> lock(n.mu);
  for (;;) {
    n.wake.wait_for(lock, std::chrono::microseconds(50));
    if (n.watched.empty())
      n.wake.wait(lock, [&] { return !n.watched.empty(); });
    std::shared_ptr<LaunchObserver> obs = n.observer;
    std::vector<std::shared_ptr<Kernel>> watched = n.watched;
    lock.unlock();

    for (const auto &k : watched) {
      const bool isDone = done(*k);
      if (obs && !isDone && !k->opaque && !k->reset &&
          newlyApplied(k->slot->host->knobs, k->notices(), k->finished(),
                       k->saw_applied_epoch))
        obs->onKnobsApplied(KernelHandle(k));
      if (!k->saw_last_block && (isDone || lastBlockTaken(*k))) {
        k->saw_last_block = true;
        std::function<void()> cb;
        {
          std::lock_guard<std::mutex> klock(k->mu);
          cb = std::move(k->on_last_block);
        }
        if (cb)
          cb();
        if (obs)
          obs->onLastBlockTaken(KernelHandle(k));
      }
      if (isDone && !k->saw_done) {
        k->saw_done = true;
        if (obs)
          obs->onDone(KernelHandle(k));
      }
    }
    watched.clear();

    lock.lock();
    for (std::size_t i = 0; i < n.watched.size();) {
      if (n.watched[i]->saw_done) {
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
  n.watched.push_back(k);
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
  obs->onLaunch(KernelHandle(k));
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
  if (obs)
    obs->onDone(KernelHandle(k));
}

} // namespace detail

void setLaunchObserver(std::shared_ptr<LaunchObserver> observer) {
  detail::Notifier &n = detail::notifier();
  std::lock_guard<std::mutex> lock(n.mu);
  n.observer = std::move(observer);
}

} // namespace smpart
