// smpart::Partition (smpart/partition.hpp) and smpart::launchConfined.
//
// A partition owns a set of SM groups of the green-context pool
// (green_contexts.hpp) and uses the pooled green context of that set. At a
// launch boundary it reads its share (the plan's target, else its request),
// rounds it to the nearest allowed size and, if that differs, moves to the
// green context of its new set behind an event fence; then it tells the
// plan the real SM ids it uses, which moves rewritten kernels off them, and
// (only when PartitionOptions::hold_timeout_ms asks for it) waits, bounded,
// until they acknowledged leaving. Nothing else ever changes its SMs.
#include "green_contexts.hpp"
#include "kernel.hpp"

#include "smpart/controller_runtime.hpp"
#include "smpart/partition.hpp"

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

namespace smpart {

using detail::green::Entry;
using detail::green::Pool;

struct Partition::Impl {
  std::string name;
  PartitionOptions opts;
  mutable std::mutex mu;
  std::shared_ptr<OpaquePlanner> planner; // null: the options decide
  bool confined = false;
  std::string why;              // why unconfined
  cudaStream_t plain = nullptr; // the stream of an unconfined partition
  Entry *cur = nullptr;         // the green context in use
  std::uint64_t groups = 0;     // its SM groups
  std::vector<unsigned> sm_ids; // its real SM ids, once known
  /// Green contexts the partition left, with their ids (where known): held
  /// too while work queued there may still run, on the old stream (until
  /// `retired` completed; the streams chain through the fences, so the
  /// last record covers every earlier one) or on a lane.
  struct Retiring {
    Entry *entry;
    std::vector<unsigned> ids;
  };
  std::vector<Retiring> retiring;
  bool sm_ids_known = false;
  unsigned requested = 0;      // SMs wanted without a plan
  cudaEvent_t fence = nullptr; // old stream -> new stream at a switch
  /// Recorded on the old stream at the last switch (the fence is
  /// re-recorded by failed switches).
  cudaEvent_t retired = nullptr;
  cudaEvent_t in = nullptr;  // launch(): caller's stream -> partition
  cudaEvent_t out = nullptr; // launch(): partition -> caller's stream
  unsigned long long boundaries = 0, switches = 0;
  bool held = false, warned_hold = false, warned_ids = false;
  bool warned_lane = false, warned_pinned = false;
  double hold_wait_ms = 0;
  unsigned long long hold_timeouts = 0;
  /// The ids a hold last timed out on: later boundaries with the same ids
  /// ask again without waiting (a kernel that never acknowledges must not
  /// cost every launch the timeout).
  std::vector<unsigned> timed_out_ids;

  cudaStream_t streamLocked() const { return cur ? cur->stream : plain; }
  /// The lane of the context in use for `caller`'s work (Pool::laneFor;
  /// leased when `lease`); null when unconfined, or when no lane can be
  /// made (said once).
  detail::green::Lane *laneLocked(cudaStream_t caller, bool lease);
  /// The stream of `lane`; without one, the partition's stream, or
  /// `caller` when unconfined.
  cudaStream_t streamOfLocked(detail::green::Lane *lane,
                              cudaStream_t caller) const;
  Status boundaryLocked();
  void holdLocked();
  void warn(bool &once, const std::string &msg) {
    if (once)
      return;
    once = true;
    std::fprintf(stderr, "smpart: warning: partition '%s': %s\n", name.c_str(),
                 msg.c_str());
  }
};

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Partition>> open;
};

Registry &registry() {
  // Never destroyed: partitions may be used by work queued until exit.
  static Registry *r = new Registry;
  return *r;
}

unsigned popcount(std::uint64_t m) {
  return static_cast<unsigned>(std::bitset<64>(m).count());
}

} // namespace

Status Partition::Impl::boundaryLocked() {
  ++boundaries;
  if (!confined)
    return Status();
  Pool &pool = Pool::instance();
  unsigned want = requested;
  if (planner)
    if (const unsigned t = planner->target(name))
      want = t;
  const unsigned g = pool.groupSize();
  const unsigned size = detail::green::nearestAllowed(
      detail::green::allowedSizes(g, pool.groups()), want);
  // A capture in progress on the partition's stream (or on the stream of
  // the context it would go back to) pins the context: the fence recorded
  // there would be captured, and the new stream that waits for it would
  // join that capture, taking in everyone's work after it.
  const bool pinned =
      size / g != popcount(groups) && detail::capturing(cur->stream);
  if (pinned)
    warn(warned_pinned, "keeps " + std::to_string(cur->sms) +
                            " SMs while its stream is being captured");
  if (size / g != popcount(groups) && !pinned) {
    // The fence first: work already on the old stream runs before any
    // work on the new one. Recorded before the switch, so that a failure
    // leaves everything as it was.
    std::uint64_t next = groups;
    Entry *e = nullptr;
    Status st;
    if (const cudaError_t r = cudaEventRecord(fence, cur->stream);
        r != cudaSuccess)
      st = detail::cudaFailure(r, "cudaEventRecord(fence, old stream)",
                               __FILE__, __LINE__);
    else
      st = pool.switchTo(next, size / g, e);
    // A capture that began meanwhile on the old stream took the fence;
    // one on the new stream would take everything after the switch: the
    // partition stays where it is, and the next boundary tries again.
    if (st.ok() && e != cur &&
        (detail::capturing(cur->stream) || detail::capturing(e->stream))) {
      pool.restore(next, groups);
      e = cur;
    }
    if (st.ok() && e != cur)
      if (const cudaError_t r = cudaStreamWaitEvent(e->stream, fence, 0);
          r != cudaSuccess) {
        pool.restore(next, groups);
        st = detail::cudaFailure(r, "cudaStreamWaitEvent(new stream, fence)",
                                 __FILE__, __LINE__);
      }
    if (!st.ok()) {
      bool once = false; // every failed switch is worth a line
      warn(once, "keeps " + std::to_string(cur->sms) + " SMs: " + st.message());
    } else if (e != cur) {
      const bool marked = cudaEventRecord(retired, cur->stream) == cudaSuccess;
      pool.retireLanes(*cur);
      // Back on a context it left: its ids are its own again.
      retiring.erase(
          std::remove_if(retiring.begin(), retiring.end(),
                         [&](const Retiring &r) { return r.entry == e; }),
          retiring.end());
      // Its ids, where not probed yet, are looked up while it retires.
      if (marked || !cur->lanes.empty())
        retiring.push_back(
            {cur, sm_ids_known ? sm_ids : std::vector<unsigned>{}});
      cur = e;
      groups = next;
      sm_ids.clear();
      sm_ids_known = false;
      held = false;
      ++switches;
    }
  }
  // Refreshed each time: a combined context's own probe may add ids.
  sm_ids_known = pool.smIds(*cur, sm_ids);
  holdLocked();
  return Status();
}

void Partition::Impl::holdLocked() {
  if (!planner)
    return;
  std::vector<unsigned> ids = sm_ids_known ? sm_ids : std::vector<unsigned>{};
  if (!retiring.empty()) {
    bool old_stream_runs;
    {
      detail::KeepLastError keep; // a captured event: no error of the caller's
      old_stream_runs = detail::queryEvent(retired) == cudaErrorNotReady;
    }
    retiring.erase(std::remove_if(retiring.begin(), retiring.end(),
                                  [&](const Retiring &r) {
                                    return !old_stream_runs &&
                                           !Pool::instance().lanesRetiring(
                                               *r.entry);
                                  }),
                   retiring.end());
    for (Retiring &r : retiring) {
      if (r.ids.empty())
        (void)Pool::instance().smIds(*r.entry, r.ids);
      ids.insert(ids.end(), r.ids.begin(), r.ids.end());
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  if (!sm_ids_known) {
    // The plan keeps the hold it was last told (the contexts left are in
    // it); new launches keep off what is known to be still in use.
    if (ids.empty())
      detail::releaseSms(this);
    else
      detail::reserveSms(this, Pool::instance().device(), ids);
    warn(warned_ids, "its SM ids are not probed yet (a busy GPU): rewritten "
                     "kernels may share its SMs until they are");
    return;
  }
  // New launches keep off these SMs from now on, whatever the plan's
  // answer: a kernel queued behind other work may start before the planner
  // hears of it.
  detail::reserveSms(this, Pool::instance().device(), ids);
  // Asked once: this moves the rewritten kernels off. By default the work
  // goes ahead without waiting for their acknowledgement (the options say
  // why); the next boundary's ask reports whether they left.
  held = planner->hold(name, ids);
  if (held || opts.hold_timeout_ms == 0 || ids == timed_out_ids)
    return;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(opts.hold_timeout_ms);
  while (!held) {
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out_ids = ids;
      ++hold_timeouts;
      warn(warned_hold,
           "rewritten kernels did not leave its SMs within " +
               std::to_string(opts.hold_timeout_ms) +
               " ms; launching anyway (they share SMs until they leave)");
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    held = planner->hold(name, ids);
  }
  hold_wait_ms += std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
}

Partition::Partition(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Partition::~Partition() {
  if (!impl_)
    return;
  detail::releaseSms(impl_.get()); // keyed by address: never left behind
  if (impl_->confined) {
    if (impl_->planner)
      impl_->planner->remove(impl_->name);
    Pool::instance().release(impl_->groups);
  }
}

Status Partition::open(const std::string &name, const PartitionOptions &options,
                       std::shared_ptr<Partition> &out) {
  out = find(name);
  if (out)
    return Status();
  // One opening at a time: a tenant is declared to the plan once, by the
  // partition that is registered.
  static std::mutex opening;
  std::lock_guard<std::mutex> one(opening);
  out = find(name);
  if (out)
    return Status();
  SMPART_RETURN_IF_ERROR(init());
  // Legal beside or inside any capture: set-up calls are not stream work.
  detail::CaptureModeRelaxed relaxed;
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  impl->opts = options;
  SMPART_CUDA_CHECK(
      cudaEventCreateWithFlags(&impl->fence, cudaEventDisableTiming));
  SMPART_CUDA_CHECK(
      cudaEventCreateWithFlags(&impl->in, cudaEventDisableTiming));
  SMPART_CUDA_CHECK(
      cudaEventCreateWithFlags(&impl->out, cudaEventDisableTiming));
  SMPART_CUDA_CHECK(
      cudaEventCreateWithFlags(&impl->retired, cudaEventDisableTiming));
  Pool &pool = Pool::instance();
  std::string why;
  bool ready = pool.ready(why);
  // The pool's green contexts, streams and probes belong to the device
  // that was current at its set-up: work sent there from another device's
  // partition would run on the wrong GPU, and its probe would write
  // another device's memory (an illegal address, fatal to the context).
  if (int dev = 0;
      ready && cudaGetDevice(&dev) == cudaSuccess && dev != pool.device()) {
    ready = false;
    why = "green contexts are set up for device " +
          std::to_string(pool.device()) +
          " only; this partition opens on device " + std::to_string(dev);
    bool once = false;
    impl->warn(once, "runs unconfined on every SM: " + why);
  }
  if (ready) {
    const unsigned all = pool.smCount();
    impl->requested =
        options.sms ? options.sms
        : options.fraction > 0
            ? static_cast<unsigned>(std::lround(options.fraction * all))
            : all / 2;
    if (options.follow_plan)
      impl->planner = options.planner ? options.planner : processPlanner();
    const unsigned g = pool.groupSize();
    if (impl->planner)
      impl->planner->add(name, (std::max(options.min_sms, g) + g - 1) / g * g,
                         g, options.weight);
    unsigned want = impl->requested;
    if (impl->planner)
      if (const unsigned t = impl->planner->target(name))
        want = t;
    const unsigned size = detail::green::nearestAllowed(
        detail::green::allowedSizes(g, pool.groups()), want);
    Entry *e = nullptr;
    Status st = pool.switchTo(impl->groups, size / g, e);
    if (st.ok()) {
      impl->confined = true;
      impl->cur = e;
    } else {
      why = st.message();
      if (impl->planner)
        impl->planner->remove(name);
      impl->planner = nullptr;
      bool once = false;
      impl->warn(once, "runs unconfined on every SM: " + why);
    }
  }
  if (!impl->confined) {
    impl->why = why;
    SMPART_CUDA_CHECK(
        cudaStreamCreateWithFlags(&impl->plain, cudaStreamNonBlocking));
  }
  auto p = std::make_shared<Partition>(std::move(impl));
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    registry().open.emplace(name, p);
  }
  {
    std::lock_guard<std::mutex> lock(p->impl_->mu);
    if (p->impl_->confined) {
      p->impl_->sm_ids_known = pool.smIds(*p->impl_->cur, p->impl_->sm_ids);
      p->impl_->holdLocked();
    }
  }
  out = std::move(p);
  return Status();
}

std::shared_ptr<Partition> Partition::find(const std::string &name) {
  std::lock_guard<std::mutex> lock(registry().mu);
  auto it = registry().open.find(name);
  return it == registry().open.end() ? nullptr : it->second;
}

void Partition::close(const std::string &name) {
  std::shared_ptr<Partition> p;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    auto it = registry().open.find(name);
    if (it == registry().open.end())
      return;
    p = std::move(it->second);
    registry().open.erase(it);
  }
  Impl &i = *p->impl_;
  std::lock_guard<std::mutex> lock(i.mu);
  if (!i.confined)
    return;
  detail::CaptureModeRelaxed relaxed;
  // Later work on the handle runs unconfined, after what was queued.
  if (cudaStreamCreateWithFlags(&i.plain, cudaStreamNonBlocking) ==
      cudaSuccess) {
    (void)cudaEventRecord(i.fence, i.cur->stream);
    (void)cudaStreamWaitEvent(i.plain, i.fence, 0);
  }
  // The plan gives the SMs back to rewritten kernels at once: let the work
  // queued here drain first (bounded like a hold).
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(i.opts.drain_timeout_ms);
  // Every lane too: a leased one may be about to launch, a capturing one
  // may have eager work queued before its capture.
  Pool &pool = Pool::instance();
  pool.retireLanes(*i.cur);
  auto busy = [&] {
    if (pool.busy(*i.cur) || pool.lanesRetiring(*i.cur))
      return true;
    for (const Impl::Retiring &r : i.retiring)
      if (pool.busy(*r.entry) || pool.lanesRetiring(*r.entry))
        return true;
    return false;
  };
  while (busy() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (i.planner)
    i.planner->remove(i.name);
  detail::releaseSms(&i);
  Pool::instance().release(i.groups);
  i.groups = 0;
  i.cur = nullptr;
  i.retiring.clear();
  i.confined = false;
  i.why = "closed";
}

cudaStream_t Partition::stream() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  detail::CaptureModeRelaxed relaxed;
  (void)impl_->boundaryLocked();
  return impl_->streamLocked();
}

detail::green::Lane *Partition::Impl::laneLocked(cudaStream_t caller,
                                                 bool lease) {
  if (!confined)
    return nullptr;
  detail::green::Lane *lane = nullptr;
  if (Status st = Pool::instance().laneFor(*cur, caller, lease, lane);
      !st.ok()) {
    warn(warned_lane, "confined work of different streams shares one "
                      "stream: " +
                          st.message());
    return nullptr;
  }
  return lane;
}

cudaStream_t Partition::Impl::streamOfLocked(detail::green::Lane *lane,
                                             cudaStream_t caller) const {
  return lane ? lane->stream : confined ? cur->stream : caller;
}

cudaStream_t Partition::streamFor(cudaStream_t caller) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  detail::CaptureModeRelaxed relaxed;
  (void)impl_->boundaryLocked();
  return impl_->streamOfLocked(impl_->laneLocked(caller, false), caller);
}

cudaStream_t Partition::leaseLane(cudaStream_t caller, void *&lease) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  detail::CaptureModeRelaxed relaxed;
  (void)impl_->boundaryLocked();
  detail::green::Lane *lane = impl_->laneLocked(caller, true);
  lease = lane;
  return impl_->streamOfLocked(lane, caller);
}

void Partition::returnLane(void *lease) {
  if (lease)
    Pool::instance().returnLane(*static_cast<detail::green::Lane *>(lease));
}

Status Partition::beginLaunch() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  detail::CaptureModeRelaxed relaxed;
  return impl_->boundaryLocked();
}

cudaStream_t Partition::currentStream() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->streamLocked();
}

Status Partition::request(unsigned sms) {
  if (sms == 0)
    return Status(Errc::kInvalidArgument,
                  "Partition::request: 0 SMs (close() ends a partition)");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->requested = sms;
  return Status();
}

const std::string &Partition::name() const { return impl_->name; }

bool Partition::confined() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->confined;
}

std::string Partition::reason() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->confined ? std::string() : impl_->why;
}

PartitionState Partition::state() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  PartitionState s;
  s.confined = impl_->confined;
  s.sms = impl_->cur ? impl_->cur->sms : 0;
  s.sm_ids = impl_->sm_ids_known ? impl_->sm_ids : std::vector<unsigned>{};
  s.sm_ids_known = impl_->confined && impl_->sm_ids_known;
  s.boundaries = impl_->boundaries;
  s.switches = impl_->switches;
  s.held = impl_->held;
  s.hold_wait_ms = impl_->hold_wait_ms;
  s.hold_timeouts = impl_->hold_timeouts;
  return s;
}

KernelHandle Partition::launch(const KernelInfo &kernel, dim3 grid, dim3 block,
                               std::size_t smem, cudaStream_t stream,
                               OpaqueLaunch launcher) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (!impl_->confined) {
    lock.unlock();
    return detail::launchOpaque(kernel, grid, block, smem, stream,
                                std::move(launcher));
  }
  cudaStream_t ps = nullptr;
  detail::green::Lane *lane = nullptr;
  {
    detail::CaptureModeRelaxed relaxed;
    (void)impl_->boundaryLocked();
    lane = impl_->laneLocked(stream, true);
    ps = impl_->streamOfLocked(lane, stream);
  }
  struct GiveBack {
    detail::green::Lane *lane;
    ~GiveBack() { returnLane(lane); }
  } const give_back{lane};
  // Ordered with `stream` exactly like a launch on it: everything before
  // on `stream` first, everything after on `stream` behind it. Event
  // record and wait are legal under capture (a fork and a join).
  if (cudaEventRecord(impl_->in, stream) != cudaSuccess ||
      cudaStreamWaitEvent(ps, impl_->in, 0) != cudaSuccess) {
    lock.unlock();
    return detail::launchOpaque(kernel, grid, block, smem, stream,
                                std::move(launcher));
  }
  KernelHandle h =
      detail::launchOpaque(kernel, grid, block, smem, ps, std::move(launcher));
  (void)cudaEventRecord(impl_->out, ps);
  (void)cudaStreamWaitEvent(stream, impl_->out, 0);
  return h;
}

namespace detail {

KernelHandle launchConfined(const KernelInfo &kernel, dim3 grid, dim3 block,
                            std::size_t smem, cudaStream_t stream,
                            OpaqueLaunch launcher) {
  if (disabledByEnvironment())
    return detail::launchOpaque(kernel, grid, block, smem, stream,
                                std::move(launcher));
  const std::string name = kernel.name ? kernel.name : "";
  std::shared_ptr<Partition> p = Partition::find(name);
  // Opened on first use only under a plan: without one nothing keeps
  // rewritten kernels off the partition, and confining the kernel would
  // only slow it down. A partition the program opened under this name is
  // used either way.
  if (!p && processPlanner())
    (void)Partition::open(name, PartitionOptions{}, p);
  if (!p)
    return detail::launchOpaque(kernel, grid, block, smem, stream,
                                std::move(launcher));
  return p->launch(kernel, grid, block, smem, stream, std::move(launcher));
}

} // namespace detail
} // namespace smpart
