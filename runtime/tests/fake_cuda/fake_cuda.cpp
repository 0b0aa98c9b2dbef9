// The CUDA runtime stand-in of fake_cuda.hpp (test support only).
#include "fake_cuda.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace {

struct Op {
  std::function<bool()> may_start; // null: at once
  std::function<void()> start;
  std::function<bool()> held; // null: finishes at once
  std::function<void()> finish;
  bool started = false;
};

struct Node {
  std::function<Op()> make; // one Op per replay
  bool alloc = false;
};

} // namespace

struct CUuserObject_st {
  void *ptr = nullptr;
  cudaHostFn_t destroy = nullptr;
  unsigned refs = 0;
};

struct CUgraph_st {
  std::vector<Node> nodes;
  std::map<CUuserObject_st *, unsigned> objects;
  bool has_alloc = false;
  unsigned execs = 0;
  bool destroyed = false;
};

struct CUgraphExec_st {
  CUgraph_st *graph = nullptr;
  std::vector<Node> nodes;
  std::map<CUuserObject_st *, unsigned> objects;
  unsigned long long last_ticket = 0; // the previous launch's end
  unsigned long long done_ticket = 0;
};

struct CUstream_st;

struct Capture {
  CUgraph_st *graph = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  bool invalidated = false;
  bool ended = false;
  unsigned long long id = 0;
  CUstream_st *origin = nullptr; ///< the stream that began it
  /// Per stream in the capture: the step of its last node, and what its
  /// next node depends on (per stream, the step of the latest work of
  /// that stream it waited for, directly or through other streams). The
  /// capture ends joined when the origin depends on every stream's last
  /// node.
  using Steps = std::map<CUstream_st *, unsigned long long>;
  Steps last_node;
  std::map<CUstream_st *, Steps> depends;
  unsigned long long steps = 0;
};

struct CUstream_st {
  bool blocking = true;
  bool legacy = false;
  std::deque<Op> queue;
  std::shared_ptr<Capture> capture;
};

struct CUevent_st {
  unsigned long long recorded = 0, completed = 0;
  /// Last recorded in a capturing stream: that capture, the stream and the
  /// capture's step at the record.
  std::shared_ptr<Capture> captured;
  Capture::Steps captured_deps; ///< what work after a wait depends on
};

namespace {

struct Fake {
  std::recursive_mutex mu;
  unsigned num_sms = 4;
  bool memory_pools = true;
  std::set<void *> host_allocs, device_allocs;
  std::map<const void *, bool> graph_allocs; // address -> live
  std::vector<CUstream_st *> streams;
  CUstream_st *legacy = nullptr;
  /// cudaStreamPerThread: one blocking stream per host thread.
  std::map<std::thread::id, CUstream_st *> per_thread;
  std::map<const void *, fake_cuda::KernelMaker> kernels;
  std::map<const void *, std::string> symbols; // cudaFuncGetName's
  std::map<const void *, int> cluster_width;   // cudaFuncGetAttributes'
  std::vector<std::vector<unsigned>> probe_runs{{0, 1, 2, 3}};
  unsigned probes = 0;
  /// Kernels cudaFuncGetAttributes was asked about (what loads a kernel
  /// under lazy module loading) in the current context: reset() makes a
  /// new one, with nothing loaded.
  std::set<const void *> loaded;
  std::function<void(const void *)> on_load;
  /// cudaFuncAttributeMaxDynamicSharedMemorySize by kernel (CUDA's default
  /// where absent: 48 KB, no static shared memory here).
  std::map<const void *, int> smem_limit;
  bool hold_probes = false;
  unsigned long long tickets = 0, capture_ids = 0;
  std::vector<std::pair<cudaHostFn_t, void *>> to_destroy;
};

Fake &fake() {
  static Fake *f = new Fake;
  return *f;
}

thread_local cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;
thread_local cudaError_t t_last_error = cudaSuccess;

CUstream_st *newStream(bool blocking, bool legacy) {
  auto *s = new CUstream_st;
  s->blocking = blocking;
  s->legacy = legacy;
  fake().streams.push_back(s);
  return s;
}

void setUp() {
  Fake &f = fake();
  if (!f.legacy)
    f.legacy = newStream(true, true);
}

CUstream_st *resolve(cudaStream_t s) {
  setUp();
  if (s == nullptr || s == cudaStreamLegacy)
    return fake().legacy;
  if (s == cudaStreamPerThread) {
    CUstream_st *&mine = fake().per_thread[std::this_thread::get_id()];
    if (!mine)
      mine = newStream(true, false);
    return mine;
  }
  return s;
}

std::vector<std::shared_ptr<Capture>> activeCaptures() {
  std::vector<std::shared_ptr<Capture>> out;
  for (CUstream_st *s : fake().streams)
    if (s->capture && !s->capture->invalidated)
      out.push_back(s->capture);
  return out;
}

/// cudaThreadExchangeStreamCaptureMode's rules for a potentially unsafe
/// call on this thread.
cudaError_t unsafeCall() {
  if (t_mode == cudaStreamCaptureModeRelaxed)
    return cudaSuccess;
  const std::thread::id me = std::this_thread::get_id();
  bool prohibited = false;
  std::vector<std::shared_ptr<Capture>> culprits;
  for (const auto &c : activeCaptures()) {
    const bool mine =
        c->thread == me && c->mode != cudaStreamCaptureModeRelaxed;
    const bool global = t_mode == cudaStreamCaptureModeGlobal &&
                        c->thread != me &&
                        c->mode == cudaStreamCaptureModeGlobal;
    if (mine || global) {
      prohibited = true;
      culprits.push_back(c);
    }
  }
  for (const auto &c : culprits)
    c->invalidated = true;
  return prohibited ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

/// Work on the legacy stream waits for every blocking stream: a capturing
/// one cannot be waited for.
cudaError_t legacyUse() {
  bool conflict = false;
  for (CUstream_st *s : fake().streams)
    if (s->blocking && !s->legacy && s->capture && !s->capture->invalidated) {
      s->capture->invalidated = true;
      conflict = true;
    }
  return conflict ? cudaErrorStreamCaptureImplicit : cudaSuccess;
}

bool runOne(CUstream_st *s) {
  if (s->queue.empty())
    return false;
  Op &o = s->queue.front();
  if (!o.started) {
    if (o.may_start && !o.may_start())
      return false;
    o.started = true;
    if (o.start)
      o.start();
  }
  if (o.held && o.held())
    return false;
  std::function<void()> fin = std::move(o.finish);
  s->queue.pop_front();
  if (fin)
    fin();
  return true;
}

void pumpLocked() {
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < fake().streams.size(); ++i)
      while (runOne(fake().streams[i]))
        progress = true;
  }
}

void destroyReleased() {
  std::vector<std::pair<cudaHostFn_t, void *>> list;
  {
    std::lock_guard<std::recursive_mutex> lock(fake().mu);
    list.swap(fake().to_destroy);
  }
  for (auto &d : list)
    d.first(d.second);
}

void release(CUuserObject_st *o, unsigned n) {
  o->refs -= std::min(n, o->refs);
  if (o->refs == 0 && o->destroy) {
    fake().to_destroy.emplace_back(o->destroy, o->ptr);
    o->destroy = nullptr;
  }
}

/// Enqueues `make()` on `s`, or appends it to the capture on `s`.
cudaError_t enqueue(cudaStream_t st, std::function<Op()> make,
                    bool alloc = false) {
  CUstream_st *s = resolve(st);
  if (s->legacy)
    if (cudaError_t e = legacyUse(); e != cudaSuccess)
      return e;
  if (s->capture) {
    if (s->capture->invalidated)
      return cudaErrorStreamCaptureInvalidated;
    s->capture->graph->nodes.push_back(Node{std::move(make), alloc});
    s->capture->graph->has_alloc |= alloc;
    s->capture->last_node[s] = ++s->capture->steps;
    return cudaSuccess;
  }
  s->queue.push_back(make());
  pumpLocked();
  return cudaSuccess;
}

Op immediate(std::function<void()> f) {
  Op o;
  o.start = std::move(f);
  return o;
}

fake_cuda::KernelRun probeRun(void **args) {
  Fake &f = fake();
  unsigned *bitmap = *static_cast<unsigned **>(args[0]);
  const std::vector<unsigned> ids =
      f.probe_runs[std::min<std::size_t>(f.probes, f.probe_runs.size() - 1)];
  ++f.probes;
  fake_cuda::KernelRun r;
  r.held = [] { return fake().hold_probes; };
  r.finish = [bitmap, ids] {
    for (unsigned id : ids)
      bitmap[id / 32] |= 1u << (id % 32);
  };
  return r;
}

#define FAKE_LOCK std::lock_guard<std::recursive_mutex> fake_lock_(fake().mu)

/// Events are never freed (a destroyed one may still be queried by
/// mistake without crashing the test); they are counted.
std::atomic<long> live_events{0};

// The devices are one GPU seen under several ordinals (setDeviceCount);
// the current one is per host thread, as in CUDA.
std::atomic<int> g_device_count{1};
thread_local int t_device = 0;

} // namespace

namespace fake_cuda {

void setDeviceCount(int count) { g_device_count = count; }

void reset(unsigned num_sms, bool memory_pools) {
  g_device_count = 1;
  t_device = 0;
  {
    FAKE_LOCK;
    Fake &f = fake();
    f.num_sms = num_sms;
    f.memory_pools = memory_pools;
    f.host_allocs.clear();
    f.device_allocs.clear();
    f.graph_allocs.clear();
    for (CUstream_st *s : f.streams) {
      s->queue.clear();
      s->capture.reset();
    }
    f.kernels.clear();
    f.symbols.clear();
    f.cluster_width.clear();
    f.smem_limit.clear();
    f.loaded.clear();
    f.on_load = nullptr;
    f.probe_runs = {{}};
    for (unsigned i = 0; i < num_sms; ++i)
      f.probe_runs[0].push_back(i);
    f.probes = 0;
    f.hold_probes = false;
  }
  destroyReleased();
}

void registerKernel(const void *fn, KernelMaker make) {
  FAKE_LOCK;
  fake().kernels[fn] = std::move(make);
}

void nameKernel(const void *fn, const char *symbol) {
  FAKE_LOCK;
  fake().symbols[fn] = symbol;
}

void requireCluster(const void *fn, int width) {
  FAKE_LOCK;
  fake().cluster_width[fn] = width;
}

void setProbeRuns(std::vector<std::vector<unsigned>> runs) {
  FAKE_LOCK;
  fake().probe_runs = std::move(runs);
}

void holdProbes(bool hold) {
  FAKE_LOCK;
  fake().hold_probes = hold;
  pumpLocked();
}

void pump() {
  FAKE_LOCK;
  pumpLocked();
}

bool allocationLive(const void *p) {
  FAKE_LOCK;
  auto it = fake().graph_allocs.find(p);
  return it != fake().graph_allocs.end() && it->second;
}

unsigned probeLaunches() {
  FAKE_LOCK;
  return fake().probes;
}

bool loaded(const void *fn) {
  FAKE_LOCK;
  return fake().loaded.count(fn) != 0;
}

long liveEvents() { return live_events.load(); }

void onLoad(std::function<void(const void *fn)> hook) {
  FAKE_LOCK;
  fake().on_load = std::move(hook);
}

} // namespace fake_cuda

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
  *count = g_device_count.load();
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *dev) {
  *dev = t_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev) {
  if (dev < 0 || dev >= g_device_count.load())
    return cudaErrorInvalidDevice;
  t_device = dev;
  return cudaSuccess;
}

constexpr int kDefaultSmemLimit = 48 * 1024, kMaxSmemLimit = 227 * 1024;

int smemLimit(const void *fn) {
  auto it = fake().smem_limit.find(fn);
  return it == fake().smem_limit.end() ? kDefaultSmemLimit : it->second;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                  const void *fn) {
  std::function<void(const void *)> hook;
  {
    FAKE_LOCK;
    if (fake().loaded.insert(fn).second)
      hook = fake().on_load;
    *attr = cudaFuncAttributes{};
    attr->maxThreadsPerBlock = 1024;
    attr->maxDynamicSharedSizeBytes = smemLimit(fn);
    if (auto it = fake().cluster_width.find(fn);
        it != fake().cluster_width.end())
      attr->requiredClusterWidth = it->second;
  }
  if (hook)
    hook(fn);
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char **name, const void *fn) {
  FAKE_LOCK;
  if (!name)
    return cudaErrorInvalidValue;
  auto it = fake().symbols.find(fn);
  if (it == fake().symbols.end())
    return t_last_error = cudaErrorInvalidDeviceFunction;
  *name = it->second.c_str();
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *fn, enum cudaFuncAttribute attr,
                                 int value) {
  FAKE_LOCK;
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return cudaSuccess;
  if (value < 0 || value > kMaxSmemLimit)
    return t_last_error = cudaErrorInvalidValue;
  fake().smem_limit[fn] = value;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks,
                                                          const void *fn,
                                                          int threads,
                                                          size_t smem) {
  FAKE_LOCK;
  *blocks = static_cast<int>(smem) > smemLimit(fn) || threads <= 0
                ? 0
                : std::min(2048 / threads, 32);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int) {
  FAKE_LOCK;
  switch (attr) {
  case cudaDevAttrMultiProcessorCount:
    *value = static_cast<int>(fake().num_sms);
    break;
  case cudaDevAttrMaxThreadsPerMultiProcessor:
    *value = 2048;
    break;
  case cudaDevAttrMaxBlocksPerMultiprocessor:
    *value = 32;
    break;
  case cudaDevAttrMemoryPoolsSupported:
    *value = fake().memory_pools ? 1 : 0;
    break;
  default:
    *value = 0;
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceReset(void) {
  fake_cuda::reset(fake().num_sms, fake().memory_pools);
  return cudaSuccess;
}

cudaError_t
cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
  std::swap(*mode, t_mode);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int) {
  FAKE_LOCK;
  if (cudaError_t e = unsafeCall(); e != cudaSuccess)
    return e;
  *p = std::calloc(1, size + 128);
  fake().host_allocs.insert(*p);
  return cudaSuccess;
}

cudaError_t cudaHostRegister(void *p, size_t, unsigned int) {
  FAKE_LOCK;
  if (cudaError_t e = unsafeCall(); e != cudaSuccess)
    return e;
  fake().host_allocs.insert(p);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned int) {
  *d = h; // one address space
  return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t size) {
  FAKE_LOCK;
  if (cudaError_t e = unsafeCall(); e != cudaSuccess)
    return e;
  *p = std::malloc(size);
  std::memset(*p, 0xa5, size); // device memory is not zeroed
  fake().device_allocs.insert(*p);
  return cudaSuccess;
}

cudaError_t cudaFree(void *) {
  FAKE_LOCK;
  return unsafeCall();
}

cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t st) {
  FAKE_LOCK;
  void *mem = std::malloc(size);
  std::memset(mem, 0xa5, size);
  *p = mem;
  fake().graph_allocs[mem] = false;
  return enqueue(
      st,
      [mem, size] {
        return immediate([mem, size] {
          // Physical memory of a graph allocation holds anything.
          std::memset(mem, 0x5a, size);
          fake().graph_allocs[mem] = true;
        });
      },
      true);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t st) {
  FAKE_LOCK;
  return enqueue(
      st, [p] { return immediate([p] { fake().graph_allocs[p] = false; }); });
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a,
                                     const void *p) {
  FAKE_LOCK;
  *a = cudaPointerAttributes{};
  if (fake().host_allocs.count(const_cast<void *>(p))) {
    a->type = cudaMemoryTypeHost;
    return cudaSuccess;
  }
  if (fake().device_allocs.count(const_cast<void *>(p))) {
    a->type = cudaMemoryTypeDevice;
    return cudaSuccess;
  }
  a->type = cudaMemoryTypeUnregistered; // CUDA 11 on: no error
  return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t n) {
  FAKE_LOCK;
  if (cudaError_t e = legacyUse(); e != cudaSuccess)
    return e;
  if (cudaError_t e = unsafeCall(); e != cudaSuccess)
    return e;
  std::memset(p, v, n);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st) {
  FAKE_LOCK;
  return enqueue(
      st, [p, v, n] { return immediate([p, v, n] { std::memset(p, v, n); }); });
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
                            enum cudaMemcpyKind, cudaStream_t st) {
  FAKE_LOCK;
  return enqueue(st, [dst, src, n] {
    return immediate([dst, src, n] { std::memcpy(dst, src, n); });
  });
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
  FAKE_LOCK;
  setUp();
  *s = newStream(!(flags & cudaStreamNonBlocking), false);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaStreamQuery(cudaStream_t st) {
  FAKE_LOCK;
  CUstream_st *s = resolve(st);
  if (s->legacy)
    if (cudaError_t e = legacyUse(); e != cudaSuccess)
      return e;
  if (cudaError_t e = unsafeCall(); e != cudaSuccess)
    return e;
  if (s->capture) { // in every capture mode
    s->capture->invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  pumpLocked();
  return s->queue.empty() ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int) {
  *e = new CUevent_st;
  ++live_events;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (e)
    --live_events;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t st) {
  FAKE_LOCK;
  CUstream_st *s = resolve(st);
  if (s->capture) { // an internal dependency of the capture: no node
    if (s->capture->invalidated)
      return cudaErrorStreamCaptureInvalidated;
    e->captured = s->capture;
    e->captured_deps = s->capture->depends[s];
    e->captured_deps[s] = s->capture->steps;
    return cudaSuccess;
  }
  e->captured.reset();
  const unsigned long long t = ++fake().tickets;
  e->recorded = t;
  return enqueue(st, [e, t] {
    return immediate([e, t] { e->completed = std::max(e->completed, t); });
  });
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  FAKE_LOCK;
  if (cudaError_t err = unsafeCall(); err != cudaSuccess)
    return err;
  if (e->captured && !e->captured->ended)
    return cudaErrorCapturedEvent;
  pumpLocked();
  return e->completed >= e->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t e, unsigned int) {
  FAKE_LOCK;
  CUstream_st *s = resolve(st);
  if (const std::shared_ptr<Capture> c = e->captured; c && !c->ended) {
    if (c->invalidated)
      return cudaErrorStreamCaptureInvalidated;
    if (s->capture && s->capture != c) { // two captures cannot merge
      s->capture->invalidated = c->invalidated = true;
      return cudaErrorStreamCaptureIsolation;
    }
    if (!s->capture) { // a fork: `s` joins the capture
      s->capture = c;
      c->last_node.emplace(s, 0);
    }
    for (const auto &[from, step] : e->captured_deps) {
      unsigned long long &d = c->depends[s][from];
      d = std::max(d, step);
    }
    return cudaSuccess;
  }
  if (s->capture && e->recorded != 0) {
    // Work outside the capture cannot be waited for inside it (CUDA asks
    // for cudaEventWaitExternal, which libsmpart never uses).
    s->capture->invalidated = true;
    return cudaErrorStreamCaptureIsolation;
  }
  const unsigned long long t = e->recorded;
  return enqueue(st, [e, t] {
    Op o;
    o.may_start = [e, t] { return e->completed >= t; };
    return o;
  });
}

cudaError_t cudaStreamBeginCapture(cudaStream_t st,
                                   enum cudaStreamCaptureMode mode) {
  FAKE_LOCK;
  CUstream_st *s = resolve(st);
  if (s->legacy || s->capture)
    return cudaErrorStreamCaptureUnsupported;
  s->capture = std::make_shared<Capture>();
  s->capture->graph = new CUgraph_st;
  s->capture->mode = mode;
  s->capture->thread = std::this_thread::get_id();
  s->capture->id = ++fake().capture_ids;
  s->capture->origin = s;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t st, cudaGraph_t *graph) {
  FAKE_LOCK;
  CUstream_st *s = resolve(st);
  *graph = nullptr;
  if (!s->capture)
    return cudaErrorIllegalState;
  if (s->capture->origin != s)
    return cudaErrorStreamCaptureUnmatched;
  std::shared_ptr<Capture> c = std::move(s->capture);
  // Every stream forked into the capture leaves it with the origin.
  c->ended = true;
  for (CUstream_st *other : fake().streams)
    if (other->capture == c)
      other->capture.reset();
  const Capture::Steps &joined = c->depends[s];
  for (const auto &[forked, last] : c->last_node) {
    auto j = joined.find(forked);
    if (forked != s && !c->invalidated && last > 0 &&
        (j == joined.end() || j->second < last)) {
      c->invalidated = true;
      return cudaErrorStreamCaptureUnjoined;
    }
  }
  if (c->invalidated)
    return cudaErrorStreamCaptureInvalidated;
  *graph = c->graph;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t st,
                                  enum cudaStreamCaptureStatus *cs) {
  FAKE_LOCK;
  CUstream_st *s = resolve(st);
  if (s->legacy)
    if (cudaError_t e = legacyUse(); e != cudaSuccess)
      return e;
  *cs = !s->capture               ? cudaStreamCaptureStatusNone
        : s->capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                  : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t st,
                                     enum cudaStreamCaptureStatus *cs,
                                     unsigned long long *id, cudaGraph_t *graph,
                                     const cudaGraphNode_t **deps,
                                     const cudaGraphEdgeData **edges,
                                     size_t *num_deps) {
  FAKE_LOCK;
  if (cudaError_t e = cudaStreamIsCapturing(st, cs); e != cudaSuccess)
    return e;
  CUstream_st *s = resolve(st);
  if (id)
    *id = s->capture ? s->capture->id : 0;
  if (graph)
    *graph = s->capture ? s->capture->graph : nullptr;
  if (deps)
    *deps = nullptr;
  if (edges)
    *edges = nullptr;
  if (num_deps)
    *num_deps = 0;
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *fn, dim3 grid, dim3 block, void **args,
                             size_t smem, cudaStream_t st) {
  FAKE_LOCK;
  if (grid.x * grid.y * grid.z == 0 || block.x * block.y * block.z == 0 ||
      block.x * block.y * block.z > 1024)
    return t_last_error = cudaErrorInvalidConfiguration;
  if (static_cast<int>(smem) > smemLimit(fn))
    return t_last_error = cudaErrorInvalidValue;
  fake_cuda::KernelRun run;
  auto it = fake().kernels.find(fn);
  if (it != fake().kernels.end())
    run = it->second(args, grid, block);
  else if (block.x == 1024)
    run = probeRun(args);
  else
    return t_last_error = cudaErrorInvalidDeviceFunction;
  const cudaError_t e = enqueue(st, [run] {
    Op o;
    o.start = run.start;
    o.held = run.held;
    o.finish = run.finish;
    return o;
  });
  if (e != cudaSuccess)
    t_last_error = e;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return t_last_error; }

cudaError_t cudaGetLastError(void) {
  const cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaUserObjectCreate(cudaUserObject_t *out, void *ptr,
                                 cudaHostFn_t destroy, unsigned int refs,
                                 unsigned int) {
  auto *o = new CUuserObject_st;
  o->ptr = ptr;
  o->destroy = destroy;
  o->refs = refs;
  *out = o;
  return cudaSuccess;
}

cudaError_t cudaGraphRetainUserObject(cudaGraph_t g, cudaUserObject_t o,
                                      unsigned int count, unsigned int flags) {
  FAKE_LOCK;
  if (!g)
    return cudaErrorInvalidValue;
  g->objects[o] += count;
  if (!(flags & cudaGraphUserObjectMove))
    o->refs += count;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *out, cudaGraph_t g,
                                 unsigned long long) {
  FAKE_LOCK;
  // CUDA: a graph with allocation or free nodes has at most one executable
  // graph at a time.
  if (g->has_alloc && g->execs > 0)
    return cudaErrorNotSupported;
  auto *x = new CUgraphExec_st;
  x->graph = g;
  x->nodes = g->nodes;
  x->objects = g->objects;
  for (auto &o : x->objects)
    o.first->refs += o.second;
  ++g->execs;
  *out = x;
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t st) {
  cudaError_t e;
  {
    FAKE_LOCK;
    // Launches of one executable graph are ordered.
    const unsigned long long prev = x->last_ticket;
    const unsigned long long mine = ++fake().tickets;
    x->last_ticket = mine;
    e = enqueue(st, [x, prev] {
      Op o;
      o.may_start = [x, prev] { return x->done_ticket >= prev; };
      return o;
    });
    for (const Node &n : x->nodes)
      if (e == cudaSuccess)
        e = enqueue(st, n.make);
    if (e == cudaSuccess)
      e = enqueue(st, [x, mine] {
        return immediate([x, mine] { x->done_ticket = mine; });
      });
  }
  return e;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
  {
    FAKE_LOCK;
    --x->graph->execs;
    for (auto &o : x->objects)
      release(o.first, o.second);
  }
  destroyReleased();
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  {
    FAKE_LOCK;
    for (auto &o : g->objects)
      release(o.first, o.second);
    g->objects.clear();
    g->destroyed = true;
  }
  destroyReleased();
  return cudaSuccess;
}

} // extern "C"
