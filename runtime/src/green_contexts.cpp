// The green-context pool behind smpart::Partition (green_contexts.hpp).
#include "green_contexts.hpp"

#include "cuda_scopes.hpp"

#include "smpart/control.hpp"
#include "smpart/detail/cuda_check.hpp"

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace smpart {
namespace detail {
namespace green {

namespace {

/// Runs of the probe per group before its ids are given up on (a GPU too
/// busy for this many runs leaves the partition's ids unknown, and says so).
constexpr unsigned kMaxProbeRuns = 8;
/// How long the first set-up waits for the probes of every group.
constexpr auto kProbeWait = std::chrono::seconds(2);
/// Groups are one 64-bit set: more would be a GPU of over 64 x 8 SMs.
constexpr unsigned kMaxGroups = 64;

bool g_printed = false; // the one line of the process, under Pool::mu_

std::string cuName(CUresult r) {
  return "CUresult " + std::to_string(static_cast<int>(r));
}

Status driverFailure(const char *what, CUresult r) {
  return Status(Errc::kCuda, std::string(what) + " failed: " + cuName(r));
}

unsigned popcount(std::uint64_t m) {
  return static_cast<unsigned>(std::bitset<64>(m).count());
}

} // namespace

Resolver runtimeResolver() {
  return [](const char *symbol, unsigned version) -> void * {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    KeepLastError keep; // a missing symbol is no error of the caller's
#if CUDART_VERSION >= 12050
    const cudaError_t e = cudaGetDriverEntryPointByVersion(
        symbol, &fn, version, cudaEnableDefault, &q);
#else // the driver's newest version of the symbol
    (void)version;
    const cudaError_t e =
        cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &q);
#endif
    return e == cudaSuccess && q == cudaDriverEntryPointSuccess ? fn : nullptr;
  };
}

DriverTable loadDriverTable(const Resolver &resolve) {
  DriverTable t;
  auto get = [&](auto &slot, const char *symbol, unsigned version) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        resolve ? resolve(symbol, version) : nullptr);
    return slot != nullptr;
  };
  // Needed everywhere; the first one missing names the fallback.
  const bool core = get(t.deviceGet, "cuDeviceGet", 2000) &&
                    get(t.getDevResource, "cuDeviceGetDevResource", 12040) &&
                    get(t.splitByCount, "cuDevSmResourceSplitByCount", 12040) &&
                    get(t.generateDesc, "cuDevResourceGenerateDesc", 12040) &&
                    get(t.create, "cuGreenCtxCreate", 12040) &&
                    get(t.destroy, "cuGreenCtxDestroy", 12040);
  if (!core) {
    for (auto [fn, name] :
         {std::pair<const void *, const char *>{
              reinterpret_cast<const void *>(t.deviceGet), "cuDeviceGet"},
          {reinterpret_cast<const void *>(t.getDevResource),
           "cuDeviceGetDevResource"},
          {reinterpret_cast<const void *>(t.splitByCount),
           "cuDevSmResourceSplitByCount"},
          {reinterpret_cast<const void *>(t.generateDesc),
           "cuDevResourceGenerateDesc"},
          {reinterpret_cast<const void *>(t.create), "cuGreenCtxCreate"},
          {reinterpret_cast<const void *>(t.destroy), "cuGreenCtxDestroy"}})
      if (!fn) {
        t.missing = name;
        break;
      }
    return t;
  }
  if (get(t.streamCreate, "cuGreenCtxStreamCreate", 12050))
    return t;
  // A 12.4 driver: a stream made while the green context is current.
  if (!(get(t.fromGreenCtx, "cuCtxFromGreenCtx", 12040) &&
        get(t.pushCurrent, "cuCtxPushCurrent", 4000) &&
        get(t.popCurrent, "cuCtxPopCurrent", 4000) &&
        get(t.streamCreateCurrent, "cuStreamCreate", 2000)))
    t.missing = "cuGreenCtxStreamCreate";
  return t;
}

unsigned groupSize(unsigned min_partition, unsigned alignment) {
  const unsigned a = std::max(1u, alignment);
  const unsigned m = std::max(1u, min_partition);
  return (m + a - 1) / a * a;
}

std::vector<unsigned> allowedSizes(unsigned group_size, unsigned groups) {
  std::vector<unsigned> sizes;
  for (unsigned i = 1; i <= groups; ++i)
    sizes.push_back(i * group_size);
  return sizes;
}

unsigned nearestAllowed(const std::vector<unsigned> &sizes, unsigned want) {
  unsigned best = 0;
  for (unsigned s : sizes) {
    const unsigned d = s > want ? s - want : want - s;
    const unsigned bd = best > want ? best - want : want - best;
    if (best == 0 || d < bd || (d == bd && s > best))
      best = s;
  }
  return best;
}

Pool &Pool::instance() {
  // Never destroyed: streams of its green contexts may have work at exit,
  // and the driver releases contexts with the process.
  static Pool *p = new Pool;
  return *p;
}

void Pool::resetForTesting(Resolver resolve) {
  Pool &p = instance();
  std::lock_guard<std::mutex> lock(p.mu_);
  p.resolve_ = std::move(resolve);
  p.tried_ = p.ok_ = false;
  p.why_.clear();
  p.drv_ = DriverTable{};
  p.group_res_.clear();
  p.probes_.clear();
  p.entries_.clear();
  p.free_ = 0;
  g_printed = false;
}

bool Pool::ready(std::string &why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!tried_) {
    tried_ = true;
    ok_ = setUpLocked(why_);
    if (!ok_ && !g_printed) {
      g_printed = true;
      std::fprintf(stderr,
                   "smpart: green contexts unavailable (%s): opaque work "
                   "runs unconfined on every SM; rewritten kernels are still "
                   "partitioned\n",
                   why_.c_str());
    }
  }
  why = why_;
  return ok_;
}

bool Pool::setUpLocked(std::string &why) {
  if (!resolve_)
    resolve_ = runtimeResolver();
  drv_ = loadDriverTable(resolve_);
  if (!drv_.usable()) {
    why = "the driver lacks " + drv_.missing + "; green contexts need 12.4+";
    return false;
  }
  int ordinal = 0;
  if (cudaGetDevice(&ordinal) != cudaSuccess) {
    why = "cudaGetDevice failed";
    return false;
  }
  ordinal_ = ordinal;
  if (CUresult r = drv_.deviceGet(&dev_, ordinal); r != CUDA_SUCCESS) {
    why = "cuDeviceGet failed: " + cuName(r);
    return false;
  }
  CUdevResource all;
  std::memset(&all, 0, sizeof all);
  if (CUresult r = drv_.getDevResource(dev_, &all, CU_DEV_RESOURCE_TYPE_SM);
      r != CUDA_SUCCESS) {
    why = "cuDeviceGetDevResource failed: " + cuName(r);
    return false;
  }
  sm_count_ = all.sm.smCount;
  group_size_ = green::groupSize(all.sm.minSmPartitionSize,
                                 all.sm.smCoscheduledAlignment);
  unsigned n = std::min(kMaxGroups, group_size_ ? sm_count_ / group_size_ : 0);
  if (n == 0) {
    why = "the device's " + std::to_string(sm_count_) +
          " SMs allow no partition of " + std::to_string(group_size_);
    return false;
  }
  group_res_.assign(n, CUdevResource{});
  CUdevResource rest;
  std::memset(&rest, 0, sizeof rest);
  if (CUresult r =
          drv_.splitByCount(group_res_.data(), &n, &all, &rest, 0, group_size_);
      r != CUDA_SUCCESS || n == 0) {
    why = "cuDevSmResourceSplitByCount failed: " + cuName(r);
    return false;
  }
  group_res_.resize(n);
  // The split may round a group up: its real size is the step.
  group_size_ = std::max(group_size_, group_res_[0].sm.smCount);
  free_ = n >= 64 ? ~0ull : (1ull << n) - 1;
  probes_.assign(n, Probe{});
  // One green context per group, each probed: any set's ids are the union.
  for (unsigned g = 0; g < n; ++g) {
    auto e = std::make_unique<Entry>();
    if (Status st = makeEntryLocked(1ull << g, *e); !st.ok()) {
      why = st.message();
      return false;
    }
    entries_[1ull << g] = std::move(e);
    if (Status st = launchProbeLocked(probes_[g], entries_[1ull << g]->stream,
                                      group_size_);
        !st.ok()) {
      why = st.message();
      return false;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + kProbeWait;
  for (;;) {
    pollProbesLocked();
    bool pending = false;
    for (const Probe &p : probes_)
      pending |= p.pending;
    if (!pending || std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (auto &kv : entries_)
    refreshIdsLocked(*kv.second);
  return true;
}

Status Pool::makeEntryLocked(std::uint64_t groups, Entry &e) {
  std::vector<CUdevResource> res;
  for (unsigned g = 0; g < group_res_.size(); ++g)
    if ((groups >> g) & 1u)
      res.push_back(group_res_[g]);
  CUdevResourceDesc desc = nullptr;
  if (CUresult r = drv_.generateDesc(&desc, res.data(),
                                     static_cast<unsigned>(res.size()));
      r != CUDA_SUCCESS)
    return driverFailure("cuDevResourceGenerateDesc", r);
  if (CUresult r = drv_.create(&e.ctx, desc, dev_, CU_GREEN_CTX_DEFAULT_STREAM);
      r != CUDA_SUCCESS)
    return driverFailure("cuGreenCtxCreate", r);
  cudaStream_t s = nullptr;
  SMPART_RETURN_IF_ERROR(makeStreamLocked(e.ctx, s));
  e.groups = groups;
  e.stream = s;
  e.sms = static_cast<unsigned>(res.size()) * group_size_;
  // Single groups are probed at set-up; a combination checks itself, first
  // on its stream (before any work the caller queues there).
  if (res.size() > 1)
    SMPART_RETURN_IF_ERROR(launchProbeLocked(e.probe, s, e.sms));
  return Status();
}

Status Pool::makeStreamLocked(CUgreenCtx ctx, cudaStream_t &out) {
  CUstream s = nullptr;
  if (drv_.streamCreate) {
    if (CUresult r = drv_.streamCreate(&s, ctx, CU_STREAM_NON_BLOCKING, 0);
        r != CUDA_SUCCESS)
      return driverFailure("cuGreenCtxStreamCreate", r);
  } else {
    CUcontext c = nullptr, popped = nullptr;
    if (CUresult r = drv_.fromGreenCtx(&c, ctx); r != CUDA_SUCCESS)
      return driverFailure("cuCtxFromGreenCtx", r);
    if (CUresult r = drv_.pushCurrent(c); r != CUDA_SUCCESS)
      return driverFailure("cuCtxPushCurrent", r);
    const CUresult r = drv_.streamCreateCurrent(&s, CU_STREAM_NON_BLOCKING);
    drv_.popCurrent(&popped);
    if (r != CUDA_SUCCESS)
      return driverFailure("cuStreamCreate in a green context", r);
  }
  out = s;
  return Status();
}

Status Pool::launchProbeLocked(Probe &p, cudaStream_t s, unsigned sms) {
  if (!p.device) {
    SMPART_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&p.device),
                                 kMaskWords * sizeof(unsigned)));
    SMPART_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&p.host),
                                    kMaskWords * sizeof(unsigned),
                                    cudaHostAllocDefault));
    SMPART_CUDA_CHECK(
        cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming));
    SMPART_CUDA_CHECK(
        cudaMemsetAsync(p.device, 0, kMaskWords * sizeof(unsigned), s));
  }
  // Four 1024-thread CTAs per SM of the context: at most two fit on an SM,
  // and each stays 20 us, so every SM of the green context gets one.
  SMPART_CUDA_CHECK(launchSmIdProbe(p.device, 4 * sms, s));
  SMPART_CUDA_CHECK(cudaMemcpyAsync(p.host, p.device,
                                    kMaskWords * sizeof(unsigned),
                                    cudaMemcpyDeviceToHost, s));
  SMPART_CUDA_CHECK(cudaEventRecord(p.done, s));
  p.pending = true;
  ++p.runs;
  return Status();
}

void Pool::pollProbeLocked(Probe &p, cudaStream_t s, unsigned sms) {
  if (!p.pending)
    return;
  const cudaError_t q = queryEvent(p.done);
  if (q == cudaErrorNotReady)
    return;
  p.pending = false;
  if (q != cudaSuccess)
    return; // unknown; nothing is made up
  std::vector<unsigned> ids;
  for (unsigned id = 0; id < kMaxSms; ++id)
    if ((p.host[id / 32] >> (id % 32)) & 1u)
      ids.push_back(id);
  // The driver may run a green context's work on more SMs than it
  // provisioned (MPS, CDP), never fewer: every id seen is the context's.
  p.ids = std::move(ids);
  if (p.ids.size() >= sms)
    p.known = true;
  else if (p.runs < kMaxProbeRuns)
    (void)launchProbeLocked(p, s, sms); // some SMs were busy: bits add up
}

void Pool::pollProbesLocked() {
  for (unsigned g = 0; g < probes_.size(); ++g)
    pollProbeLocked(probes_[g], entries_.at(1ull << g)->stream, group_size_);
}

void Pool::refreshIdsLocked(Entry &e) {
  pollProbesLocked();
  std::vector<unsigned> ids;
  for (unsigned g = 0; g < probes_.size(); ++g) {
    if (!((e.groups >> g) & 1u))
      continue;
    if (!probes_[g].known)
      return;
    ids.insert(ids.end(), probes_[g].ids.begin(), probes_[g].ids.end());
  }
  if (e.probe.device) {
    pollProbeLocked(e.probe, e.stream, e.sms);
    ids.insert(ids.end(), e.probe.ids.begin(), e.probe.ids.end());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  e.sm_ids = std::move(ids);
  e.sm_ids_known = true;
}

std::uint64_t Pool::resize(std::uint64_t have, unsigned want) {
  std::lock_guard<std::mutex> lock(mu_);
  return resizeLocked(have, want);
}

std::uint64_t Pool::resizeLocked(std::uint64_t have, unsigned want) {
  want = std::max(1u, std::min(want, groups()));
  while (popcount(have) > want) {
    const unsigned top = 63 - static_cast<unsigned>(__builtin_clzll(have));
    have &= ~(1ull << top);
    free_ |= 1ull << top;
  }
  for (unsigned g = 0; g < groups() && popcount(have) < want; ++g)
    if ((free_ >> g) & 1u) {
      free_ &= ~(1ull << g);
      have |= 1ull << g;
    }
  return have;
}

void Pool::release(std::uint64_t groups) {
  std::lock_guard<std::mutex> lock(mu_);
  free_ |= groups;
}

Status Pool::switchTo(std::uint64_t &have, unsigned want, Entry *&out) {
  std::lock_guard<std::mutex> lock(mu_);
  out = nullptr;
  const std::uint64_t free_before = free_;
  const std::uint64_t next = resizeLocked(have, want);
  if (next == 0)
    return Status(Errc::kNotSupported, "no SM group is free");
  if (Status st = entryForLocked(next, out); !st.ok()) {
    free_ = free_before;
    return st;
  }
  // Its new owner holds its SMs: what an owner before it left running
  // there is no longer a reason to hold them apart.
  for (auto &l : out->lanes)
    l->retire_pending = false;
  have = next;
  return Status();
}

void Pool::restore(std::uint64_t now, std::uint64_t back) {
  std::lock_guard<std::mutex> lock(mu_);
  free_ = (free_ | now) & ~back;
}

Status Pool::entryFor(std::uint64_t groups, Entry *&out) {
  std::lock_guard<std::mutex> lock(mu_);
  return entryForLocked(groups, out);
}

Status Pool::entryForLocked(std::uint64_t groups, Entry *&out) {
  out = nullptr;
  if (!ok_)
    return Status(Errc::kNotSupported, "green contexts unavailable: " + why_);
  auto it = entries_.find(groups);
  if (it == entries_.end()) {
    auto e = std::make_unique<Entry>();
    SMPART_RETURN_IF_ERROR(makeEntryLocked(groups, *e));
    it = entries_.emplace(groups, std::move(e)).first;
  }
  out = it->second.get();
  return Status();
}

bool Pool::smIds(Entry &e, std::vector<unsigned> &out) {
  std::lock_guard<std::mutex> lock(mu_);
  refreshIdsLocked(e);
  if (e.sm_ids_known)
    out = e.sm_ids;
  return e.sm_ids_known;
}

namespace {

/// Whether `s` is outside any capture: querying a capturing stream, or an
/// event recorded in one, is an error that may invalidate the capture.
bool queued(cudaStream_t s) {
  return !capturing(s) && cudaStreamQuery(s) == cudaErrorNotReady;
}

} // namespace

Status Pool::laneFor(Entry &e, cudaStream_t caller, bool lease, Lane *&out) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::thread::id thread = caller == cudaStreamPerThread
                                     ? std::this_thread::get_id()
                                     : std::thread::id();
  const unsigned long long use = ++e.lane_uses;
  Lane *lane = nullptr;
  for (auto &l : e.lanes)
    if (l->caller == caller && l->thread == thread)
      lane = l.get();
  if (!lane && e.lanes.size() >= kMaxLanes) {
    // Oldest first. Unleased and outside any capture under this lock, it
    // cannot be joining one: only a lease holder forks into a lane.
    for (auto &l : e.lanes)
      if (l->leases == 0 && !l->pinned && !l->retire_pending &&
          (!lane || l->last_use < lane->last_use) && !capturing(l->stream) &&
          cudaStreamQuery(l->stream) == cudaSuccess)
        lane = l.get();
  }
  if (!lane) {
    auto made = std::make_unique<Lane>();
    SMPART_RETURN_IF_ERROR(makeStreamLocked(e.ctx, made->stream));
    SMPART_CUDA_CHECK(
        cudaEventCreateWithFlags(&made->retired, cudaEventDisableTiming));
    lane = made.get();
    e.lanes.push_back(std::move(made));
  }
  lane->caller = caller;
  lane->thread = thread;
  lane->last_use = use;
  if (lease)
    ++lane->leases;
  else
    lane->pinned = true;
  out = lane;
  return Status();
}

void Pool::returnLane(Lane &lane) {
  std::lock_guard<std::mutex> lock(mu_);
  if (lane.leases > 0)
    --lane.leases;
}

void Pool::retireLanes(Entry &e) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &l : e.lanes)
    l->retire_pending = true;
  retireReadyLocked(e);
}

void Pool::retireReadyLocked(Entry &e) {
  // A leased lane may be joining a capture right now, and a capturing one
  // cannot be recorded outside it; their work (eager work queued before
  // the capture included) is held until they are neither.
  for (auto &l : e.lanes)
    if (l->retire_pending && l->leases == 0 && !capturing(l->stream)) {
      (void)cudaEventRecord(l->retired, l->stream);
      l->retire_pending = false;
    }
}

bool Pool::lanesRetiring(Entry &e) {
  std::lock_guard<std::mutex> lock(mu_);
  retireReadyLocked(e);
  for (auto &l : e.lanes)
    if (l->retire_pending || queryEvent(l->retired) == cudaErrorNotReady)
      return true;
  return false;
}

bool Pool::busy(Entry &e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queued(e.stream))
    return true;
  for (auto &l : e.lanes)
    if (queued(l->stream))
      return true;
  return false;
}

} // namespace green
} // namespace detail
} // namespace smpart
