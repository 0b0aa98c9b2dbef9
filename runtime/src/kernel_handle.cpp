// libsmpart host runtime: KernelHandle, the user's view of one launch
// (knobs, progress, completion). See smpart/runtime.hpp for the contract.
#include "kernel.hpp"

#include <algorithm>
#include <chrono>
#include <string>

namespace smpart {

namespace detail {
namespace {
Status notSupported(const Kernel &k, const char *what) {
  return Status(Errc::kNotSupported,
                std::string(what) + " on opaque kernel " + k.name +
                    ": it was not transformed and takes no knobs");
}
} // namespace
} // namespace detail

namespace {
Status emptyHandle() {
  return Status(Errc::kInvalidArgument, "empty smpart::KernelHandle");
}
} // namespace

/// Common prologue of knob calls: a usable, transformed kernel.
#define SMPART_KNOB_PROLOGUE(what)                                             \
  if (!k_)                                                                     \
    return emptyHandle();                                                      \
  if (!k_->status.ok())                                                        \
    return k_->status;                                                         \
  if (k_->opaque)                                                              \
    return detail::notSupported(*k_, what)

Status KernelHandle::status() const { return k_ ? k_->status : emptyHandle(); }
bool KernelHandle::opaque() const { return k_ && k_->opaque; }
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
  return k_ && k_->ctx ? k_->ctx->info : DeviceInfo{};
}

Status KernelHandle::setSmMask(const SmMask &mask) {
  SMPART_KNOB_PROLOGUE("setSmMask");
  detail::storeMask(k_->slot->host->knobs, mask);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::setCtasPerSm(unsigned n) {
  SMPART_KNOB_PROLOGUE("setCtasPerSm");
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setCtasPerSm(" + std::to_string(n) + "): at most " +
                      std::to_string(kMaxCtasPerSm));
  k_->slot->host->knobs.ctas_per_sm = n;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::setBypassCtasPerSm(unsigned n) {
  SMPART_KNOB_PROLOGUE("setBypassCtasPerSm");
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setBypassCtasPerSm(" + std::to_string(n) + "): at most " +
                      std::to_string(kMaxCtasPerSm));
  k_->slot->host->knobs.bypass_ctas_per_sm = n;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::preempt() {
  SMPART_KNOB_PROLOGUE("preempt");
  std::lock_guard<std::mutex> lock(k_->mu);
  k_->preempted = true;
  k_->slot->host->knobs.preempt = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status();
}

Status KernelHandle::resume(unsigned long long ctas) {
  SMPART_KNOB_PROLOGUE("resume");
  {
    std::lock_guard<std::mutex> lock(k_->mu);
    k_->preempted = false;
    k_->slot->host->knobs.preempt = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  return grow(ctas);
}

Status KernelHandle::grow(unsigned long long ctas) {
  SMPART_KNOB_PROLOGUE("grow");
  std::lock_guard<std::mutex> lock(k_->mu);
  if (k_->preempted)
    return Status(Errc::kPreempted,
                  "grow on preempted kernel " + k_->name + ": resume it");
  if (ctas == 0)
    ctas = k_->ctasToLaunch();
  cudaStream_t s;
  {
    std::lock_guard<std::mutex> rlock(detail::runtime().mu);
    detail::DeviceCtx &ctx = *k_->ctx;
    s = ctx.relaunch[ctx.next_relaunch++ % detail::kRelaunchStreams];
  }
  // Same inputs as the first instance: after the user's earlier work.
  SMPART_CUDA_CHECK(cudaStreamWaitEvent(s, k_->slot->started, 0));
  SMPART_RETURN_IF_ERROR(k_->launchInstance(ctas, s));
  cudaEvent_t e = nullptr;
  SMPART_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  k_->relaunch_done.push_back(e);
  SMPART_CUDA_CHECK(cudaEventRecord(e, s));
  return Status();
}

Knobs KernelHandle::knobs() const {
  Knobs out{};
  if (!k_ || !k_->slot)
    return out;
  const volatile Knobs &k = k_->slot->host->knobs;
  for (unsigned w = 0; w < kMaxSms / 32; ++w)
    out.sm_mask[w] = k.sm_mask[w];
  out.ctas_per_sm = k.ctas_per_sm;
  out.bypass_ctas_per_sm = k.bypass_ctas_per_sm;
  out.preempt = k.preempt;
  return out;
}

Status KernelHandle::progress(Progress &out) const {
  if (!k_)
    return emptyHandle();
  if (!k_->status.ok())
    return k_->status;
  out = Progress{};
  out.total = k_->total;
  if (k_->opaque) {
    const cudaError_t q = cudaEventQuery(k_->opaque_done);
    if (q != cudaSuccess && q != cudaErrorNotReady)
      SMPART_CUDA_CHECK(q);
    out.taken = out.done = q == cudaSuccess ? k_->total : 0;
    return Status();
  }
  detail::Slot &s = *k_->slot;
  cudaStream_t side = k_->ctx->side;
  // One asynchronous copy on the side stream: it runs beside the kernel,
  // never behind it.
  SMPART_CUDA_CHECK(cudaMemcpyAsync(&s.host->snapshot, s.state, sizeof(State),
                                    cudaMemcpyDeviceToHost, side));
  SMPART_CUDA_CHECK(cudaStreamSynchronize(side));
  const State &st = s.host->snapshot;
  out.taken = std::min(st.next_block, k_->total);
  out.done = st.blocks_done;
  out.resident_ctas = st.resident_ctas;
  return Status();
}

bool KernelHandle::lastBlockTaken() const {
  if (!k_ || !k_->status.ok())
    return false;
  if (k_->opaque)
    return detail::eventDone(k_->opaque_done);
  return k_->slot->host->notices.last_block_taken != 0;
}

Status KernelHandle::onLastBlockTaken(std::function<void()> cb) {
  SMPART_KNOB_PROLOGUE("onLastBlockTaken");
  std::lock_guard<std::mutex> lock(k_->mu);
  if (k_->watcher.joinable())
    return Status(Errc::kInvalidArgument,
                  "onLastBlockTaken: a callback is already set for " +
                      k_->name);
  detail::Kernel *k = k_.get();
  k_->watcher = std::thread([k, cb = std::move(cb)] {
    const volatile Notices &n = k->slot->host->notices;
    while (!n.last_block_taken) {
      if (k->stop_watch)
        return;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    cb();
  });
  return Status();
}

Status KernelHandle::wait() {
  if (!k_)
    return emptyHandle();
  if (!k_->status.ok())
    return k_->status;
  if (!k_->opaque) {
    bool preempted;
    {
      std::lock_guard<std::mutex> lock(k_->mu);
      preempted = k_->preempted;
    }
    if (preempted) {
      SMPART_RETURN_IF_ERROR(drain());
      Progress p;
      SMPART_RETURN_IF_ERROR(progress(p));
      if (p.done < p.total)
        return Status(Errc::kPreempted,
                      "wait on preempted kernel " + k_->name + ": " +
                          std::to_string(p.done) + " of " +
                          std::to_string(p.total) +
                          " logical blocks done; resume it first");
    }
  }
  SMPART_CUDA_CHECK(cudaEventSynchronize(k_->doneEvent()));
  return Status();
}

Status KernelHandle::drain() {
  if (!k_)
    return emptyHandle();
  if (!k_->status.ok())
    return k_->status;
  if (k_->opaque) {
    SMPART_CUDA_CHECK(cudaEventSynchronize(k_->opaque_done));
    return Status();
  }
  SMPART_CUDA_CHECK(cudaEventSynchronize(k_->slot->first_done));
  std::vector<cudaEvent_t> events;
  {
    std::lock_guard<std::mutex> lock(k_->mu);
    events = k_->relaunch_done;
  }
  for (cudaEvent_t e : events)
    SMPART_CUDA_CHECK(cudaEventSynchronize(e));
  return Status();
}

cudaEvent_t KernelHandle::doneEvent() const {
  return k_ && k_->status.ok() ? k_->doneEvent() : nullptr;
}

} // namespace smpart
