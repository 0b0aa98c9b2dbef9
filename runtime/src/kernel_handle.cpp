// libsmpart host runtime: KernelHandle, the user's view of one launch
// (knobs, progress, completion). See smpart/runtime.hpp for the contract.
//
// Nothing here blocks on a GPU queue: knobs are stores into host-mapped
// memory, progress and completion are read from the device's mirror in
// host-mapped memory (smpart::Notices), and the only CUDA calls are
// launches (grow) and event queries.
#include "kernel.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

namespace smpart {

namespace {

Status emptyHandle() {
  return Status(Errc::kInvalidArgument, "empty smpart::KernelHandle");
}

Status notSupported(const detail::Kernel &k, const char *what,
                    const char *why) {
  return Status(Errc::kNotSupported,
                std::string(what) + " on kernel " + k.name + ": " + why);
}

/// How a host wait polls host memory: yields for the first 200 us, then
/// sleeps 20 us, doubling to 1 ms. A sleep is rounded up by the thread's
/// timer slack (50 us by default on Linux), so sleeping from the start
/// would put a 55-110 us floor under drain() and wait() of kernels that
/// end within microseconds; yielding keeps the floor at a few us and
/// gives the core to other threads meanwhile.
class Backoff {
public:
  void pause() {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point now = Clock::now();
    if (start_ == Clock::time_point{})
      start_ = now;
    if (now - start_ < std::chrono::microseconds(200)) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(us_));
    us_ = std::min(us_ * 2, 1000u);
  }

private:
  std::chrono::steady_clock::time_point start_{};
  unsigned us_ = 20;
};

} // namespace

/// Common prologue of knob calls: a usable, transformed kernel.
#define SMPART_KNOB_PROLOGUE(what)                                             \
  if (!k_)                                                                     \
    return emptyHandle();                                                      \
  if (Status st_ = k_->current(); !st_.ok())                                   \
    return st_;                                                                \
  if (k_->opaque)                                                              \
  return notSupported(*k_, what, "it was not transformed and takes no knobs")

unsigned long long KernelHandle::id() const { return k_ ? k_->id : 0; }
Status KernelHandle::status() const {
  return k_ ? k_->currentForCuda() : emptyHandle();
}
bool KernelHandle::opaque() const { return k_ && k_->opaque; }
bool KernelHandle::captured() const { return k_ && k_->captured; }
const char *KernelHandle::name() const { return k_ ? k_->name.c_str() : ""; }
unsigned long long KernelHandle::totalBlocks() const {
  return k_ ? k_->total : 0;
}
unsigned long long KernelHandle::launchedCtas() const {
  if (!k_)
    return 0;
  std::lock_guard<std::mutex> lock(k_->mu);
  return k_->launched;
}
unsigned KernelHandle::occupancy() const { return k_ ? k_->occupancy : 0; }
DeviceInfo KernelHandle::device() const {
  if (!k_ || !k_->ctx)
    return DeviceInfo{};
  // Under the lock: a launch that finds a reset erases the context there.
  std::lock_guard<std::mutex> lock(detail::runtime().mu);
  return k_->reset ? DeviceInfo{} : k_->ctx->info;
}

Status KernelHandle::setSmMask(const SmMask &mask) {
  SMPART_KNOB_PROLOGUE("setSmMask");
  if (mask.none())
    return Status(Errc::kInvalidArgument,
                  "setSmMask on kernel " + k_->name +
                      ": an empty mask leaves no SM to run on; use preempt()");
  std::lock_guard<std::mutex> lock(k_->mu);
  detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                     [&](volatile Knobs &k) { detail::storeMask(k, mask); });
  return Status();
}

Status KernelHandle::setCtasPerSm(unsigned n) {
  SMPART_KNOB_PROLOGUE("setCtasPerSm");
  if (n == 0 || n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument, "setCtasPerSm(" + std::to_string(n) +
                                              ") on kernel " + k_->name +
                                              ": must be 1.." +
                                              std::to_string(kMaxCtasPerSm) +
                                              " (preempt() stops every CTA)");
  std::lock_guard<std::mutex> lock(k_->mu);
  detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                     [&](volatile Knobs &k) { k.ctas_per_sm = n; });
  return Status();
}

Status KernelHandle::setBypassCtasPerSm(unsigned n) {
  SMPART_KNOB_PROLOGUE("setBypassCtasPerSm");
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setBypassCtasPerSm(" + std::to_string(n) + "): at most " +
                      std::to_string(kMaxCtasPerSm));
  std::lock_guard<std::mutex> lock(k_->mu);
  detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                     [&](volatile Knobs &k) { k.bypass_ctas_per_sm = n; });
  return Status();
}

Status KernelHandle::setChunkTargetNs(unsigned ns) {
  SMPART_KNOB_PROLOGUE("setChunkTargetNs");
  std::lock_guard<std::mutex> lock(k_->mu);
  detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                     [&](volatile Knobs &k) { k.chunk_target_ns = ns; });
  return Status();
}

Status KernelHandle::setKnobs(const KnobSet &set) {
  SMPART_KNOB_PROLOGUE("setKnobs");
  if (set.mask.none())
    return Status(Errc::kInvalidArgument,
                  "setKnobs on kernel " + k_->name +
                      ": an empty mask leaves no SM to run on; set preempt");
  if (set.ctas_per_sm == 0 || set.ctas_per_sm > kMaxCtasPerSm ||
      set.bypass_ctas_per_sm > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setKnobs on kernel " + k_->name + ": ctas_per_sm " +
                      std::to_string(set.ctas_per_sm) + ", bypass " +
                      std::to_string(set.bypass_ctas_per_sm) +
                      ": CTAs per SM must be 1.." +
                      std::to_string(kMaxCtasPerSm) + ", bypass at most that");
  std::lock_guard<std::mutex> lock(k_->mu);
  k_->preempted = set.preempt;
  detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                     [&](volatile Knobs &k) { detail::storeKnobSet(k, set); });
  return Status();
}

Status KernelHandle::preempt() {
  SMPART_KNOB_PROLOGUE("preempt");
  std::lock_guard<std::mutex> lock(k_->mu);
  k_->preempted = true;
  detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                     [](volatile Knobs &k) { k.preempt = 1; });
  return Status();
}

Status KernelHandle::resume(unsigned long long ctas) {
  SMPART_KNOB_PROLOGUE("resume");
  {
    std::lock_guard<std::mutex> lock(k_->mu);
    k_->preempted = false;
    // A setKnobs() that cleared it already made the one write a re-plan
    // needs: a second would only cost the device another epoch.
    if (k_->slot->host->knobs.preempt)
      detail::writeKnobs(k_->slot->host->knobs, k_->slot->host->knob_image,
                         [](volatile Knobs &k) { k.preempt = 0; });
  }
  // The anchor resumes on its own; new CTAs only add speed.
  if (k_->captured)
    return Status();
  return grow(ctas);
}

Status KernelHandle::grow(unsigned long long ctas) {
  SMPART_KNOB_PROLOGUE("grow");
  if (k_->captured)
    return notSupported(*k_, "grow",
                        "it was captured into a graph; a replay runs the "
                        "CTAs the capture launched");
  std::lock_guard<std::mutex> lock(k_->mu);
  if (k_->preempted)
    return Status(Errc::kPreempted,
                  "grow on preempted kernel " + k_->name + ": resume it");
  // Not before a CTA started: the first instance fills every SM, each CTA
  // under the knobs written by then; nor once nothing is left to take.
  const volatile Notices &n = k_->notices();
  if (!k_->first_enqueued ||
      !detail::relaunchUseful(n.started != 0, n.last_block_taken != 0,
                              k_->finished()))
    return Status();
  // On the kernel's device, from whatever thread calls (a controller's).
  // The context is read under the runtime's lock, checked for a reset
  // there: a launch that finds the reset erases it under that lock.
  int dev = -1;
  unsigned long long serial = 0;
  {
    std::lock_guard<std::mutex> rlock(detail::runtime().mu);
    if (k_->deviceGone())
      return k_->current();
    dev = k_->ctx->info.device;
    serial = k_->ctx->serial;
    if (ctas == 0)
      ctas = k_->ctasToLaunch();
  }
  detail::CurrentDevice device(dev);
  // A stream of its own for this relaunch: it never queues behind another
  // kernel's relaunch (detail/relaunch.hpp).
  cudaStream_t s = nullptr;
  cudaEvent_t idle = nullptr;
  std::size_t index = detail::RelaunchStreamPool::kNone;
  {
    std::lock_guard<std::mutex> rlock(detail::runtime().mu);
    if (k_->reset) // found meanwhile: the context may be gone
      return k_->current();
    SMPART_RETURN_IF_ERROR(
        detail::relaunchStreamLocked(*k_->ctx, k_->id, s, idle, index));
  }
  // Lent until its idle event is recorded below (or this returns early):
  // no concurrent grow() may take the stream in between.
  // To its context if that is still the device's (a reset found meanwhile
  // erased it, streams and all).
  struct GiveBack {
    int dev;
    unsigned long long serial;
    std::size_t index;
    ~GiveBack() {
      if (index == detail::RelaunchStreamPool::kNone)
        return;
      detail::Runtime &r = detail::runtime();
      std::lock_guard<std::mutex> rlock(r.mu);
      auto it = r.devices.find(dev);
      if (it != r.devices.end() && it->second.serial == serial)
        it->second.relaunch_pool.returned(index);
    }
  };
  const GiveBack give_back{dev, serial, index};
  if (!s)
    return Status(Errc::kNotSupported,
                  "grow on kernel " + k_->name +
                      ": every relaunch stream is busy; the kernel goes on "
                      "with the CTAs it has");
  // Called from controller threads while the program may capture a graph
  // in global mode elsewhere: nothing here touches a capturing stream.
  detail::CaptureModeRelaxed relaxed;
  // Earlier relaunches that completed need their events no more: a kernel
  // grown and resumed all its long life would otherwise keep one per call.
  auto &events = k_->relaunch_done;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](cudaEvent_t done) {
                                if (!detail::eventDone(done))
                                  return false;
                                cudaEventDestroy(done);
                                return true;
                              }),
               events.end());
  cudaEvent_t e = nullptr;
  SMPART_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  // Same inputs as the first instance: after the user's earlier work (the
  // kernel started, so this event has completed and nothing waits).
  cudaError_t err = cudaStreamWaitEvent(s, k_->slot->started, 0);
  Status st =
      err == cudaSuccess
          ? k_->launchInstance(ctas, s, false)
          : detail::cudaFailure(err, "cudaStreamWaitEvent", __FILE__, __LINE__);
  // Recorded even after a failure, so that the slot is reclaimed only once
  // this stream is past whatever was enqueued.
  cudaEventRecord(e, s);
  cudaEventRecord(idle, s); // the stream is lent again once this passed
  k_->relaunch_done.push_back(e);
  return st;
}

Knobs KernelHandle::knobs() const {
  Knobs out{};
  if (!k_ || !k_->slot || k_->reset)
    return out;
  const volatile Knobs &k = k_->slot->host->knobs;
  for (unsigned w = 0; w < kMaskWords; ++w)
    out.sm_mask[w] = k.sm_mask[w];
  out.ctas_per_sm = k.ctas_per_sm;
  out.bypass_ctas_per_sm = k.bypass_ctas_per_sm;
  out.preempt = k.preempt;
  out.chunk_target_ns = k.chunk_target_ns;
  out.stall_grace_ns = k.stall_grace_ns;
  out.epoch = k.epoch;
  return out;
}

bool KernelHandle::knobsApplied() const {
  if (!k_ || k_->opaque || k_->captured || !k_->slot || k_->deviceGoneLately())
    return true;
  std::uint32_t epoch;
  {
    std::lock_guard<std::mutex> lock(k_->mu); // knob writers hold it
    epoch = k_->slot->host->knobs.epoch;
  }
  return detail::knobsAppliedAt(k_->notices(), k_->finished(), epoch);
}

bool KernelHandle::acknowledgedAt(std::uint32_t &epoch,
                                  unsigned long long &device_ns) const {
  if (!k_ || k_->opaque || k_->captured || k_->reset || !k_->slot)
    return false;
  const volatile Notices &n = k_->notices();
  return detail::readEpochTime(n.acked_epoch, n.acked_ns, epoch, device_ns);
}

bool KernelHandle::publishedAt(std::uint32_t &epoch,
                               unsigned long long &device_ns) const {
  if (!k_ || k_->opaque || k_->captured || k_->reset || !k_->slot)
    return false;
  const volatile Notices &n = k_->notices();
  return detail::readEpochTime(n.published_epoch, n.published_ns, epoch,
                               device_ns);
}

Status KernelHandle::progress(Progress &out) const {
  if (!k_)
    return emptyHandle();
  (void)k_->deviceGoneLately(); // a poll loop must see a reset too
  SMPART_RETURN_IF_ERROR(k_->current());
  out = Progress{};
  out.total = k_->total;
  if (k_->opaque) {
    SMPART_RETURN_IF_ERROR(k_->currentForCuda());
    const bool done = detail::eventDone(k_->opaque_done);
    out.taken = out.done = done ? k_->total : 0;
    out.started = out.finished = done;
    return Status();
  }
  const volatile Notices &n = k_->notices();
  out.finished = k_->finished();
  out.taken = out.finished
                  ? k_->total
                  : std::min<unsigned long long>(
                        static_cast<unsigned long long>(n.taken), k_->total);
  out.done = out.finished ? k_->total : n.done;
  out.resident_ctas = out.finished ? 0 : n.resident_ctas;
  out.started = n.started != 0 || out.finished;
  out.parked = !out.finished && n.parked != 0;
  out.stalls = n.stalls;
  out.strong_fetches = n.strong_fetches;
  return Status();
}

bool KernelHandle::successorQueued() const {
  return k_ && k_->successor_queued.load(std::memory_order_acquire);
}

bool KernelHandle::lastBlockTaken() const {
  if (!k_ || !k_->current().ok())
    return false;
  if (k_->opaque)
    return !k_->deviceGone() && detail::eventDone(k_->opaque_done);
  // finished first: nothing orders another CTA's last_block_taken store
  // before the anchor's `finished` on the way to host memory.
  return k_->finished() || k_->notices().last_block_taken != 0;
}

Status KernelHandle::onLastBlockTaken(std::function<void()> cb) {
  SMPART_KNOB_PROLOGUE("onLastBlockTaken");
  {
    std::lock_guard<std::mutex> lock(k_->mu);
    if (k_->on_last_block)
      return Status(Errc::kInvalidArgument,
                    "onLastBlockTaken: a callback is already set for " +
                        k_->name);
    k_->on_last_block = std::move(cb);
    k_->last_block_callback.store(true, std::memory_order_release);
  }
  // Also after the notice thread saw the last block (an observer had it
  // watched from the launch): it looks again while a callback waits.
  detail::watch(k_);
  return Status();
}

namespace {

/// No CTA of the kernel works: only the parked anchor is left, or none
/// ever ran.
bool drained(const detail::Kernel &k) {
  const volatile Notices &n = k.notices();
  return k.finished() || !n.started || (n.parked && n.resident_ctas == 0);
}

/// The kernel completed on its stream; say whether it ran its blocks.
Status completed(const detail::Kernel &k) {
  if (k.captured || k.finished())
    return Status();
  return Status(Errc::kCuda, "kernel " + k.name +
                                 " completed without running its " +
                                 std::to_string(k.total) +
                                 " logical blocks: its launch failed (see "
                                 "cudaGetLastError())");
}

} // namespace

Status KernelHandle::wait() {
  if (!k_)
    return emptyHandle();
  SMPART_RETURN_IF_ERROR(k_->current());
  if (k_->captured)
    return notSupported(*k_, "wait",
                        "it was captured into a graph; synchronise the "
                        "stream the graph is launched on");
  for (Backoff b;; b.pause()) {
    SMPART_RETURN_IF_ERROR(k_->currentForCuda());
    const cudaError_t q = detail::queryEvent(k_->doneEvent());
    if (q == cudaSuccess)
      return k_->opaque ? Status() : completed(*k_);
    if (q != cudaErrorNotReady)
      SMPART_CUDA_CHECK(q);
    if (k_->opaque)
      continue;
    bool preempted;
    {
      std::lock_guard<std::mutex> lock(k_->mu);
      preempted = k_->preempted;
    }
    if (preempted && drained(*k_)) {
      Progress p;
      SMPART_RETURN_IF_ERROR(progress(p));
      if (p.finished)
        continue; // completes on the stream at once
      return Status(Errc::kPreempted,
                    "wait on preempted kernel " + k_->name + ": " +
                        std::to_string(p.done) + " of " +
                        std::to_string(p.total) +
                        " logical blocks done; resume it first");
    }
  }
}

Status KernelHandle::drain() {
  if (!k_)
    return emptyHandle();
  SMPART_RETURN_IF_ERROR(k_->current());
  for (Backoff b;; b.pause()) {
    SMPART_RETURN_IF_ERROR(k_->currentForCuda());
    const cudaError_t q = detail::queryEvent(k_->doneEvent());
    if (q == cudaSuccess || (!k_->opaque && drained(*k_)))
      return Status();
    if (q != cudaErrorNotReady)
      SMPART_CUDA_CHECK(q);
  }
}

cudaEvent_t KernelHandle::doneEvent() const {
  return k_ && k_->currentForCuda().ok() ? k_->doneEvent() : nullptr;
}

} // namespace smpart
