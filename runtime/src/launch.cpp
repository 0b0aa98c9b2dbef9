// libsmpart host runtime: launch of transformed and opaque kernels, and the
// thread's last launch error. See smpart/runtime.hpp for the contract.
#include "kernel.hpp"

#include <string>

namespace smpart {
namespace detail {

cudaError_t launchJoin(const State *state, unsigned long long total,
                       cudaStream_t stream);

namespace {

thread_local Status t_last_error;

KernelHandle failed(std::shared_ptr<Kernel> k, Status st) {
  k->status = st;
  t_last_error = std::move(st);
  return KernelHandle(std::move(k));
}

Status validate(dim3 grid, unsigned long long &total) {
  total = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  if (total == 0)
    return Status(Errc::kInvalidArgument,
                  "launch with an empty grid (" + std::to_string(grid.x) +
                      ", " + std::to_string(grid.y) + ", " +
                      std::to_string(grid.z) + ")",
                  static_cast<int>(cudaErrorInvalidConfiguration));
  return Status();
}

} // namespace

/// The steps of a transformed launch; any failure leaves a status.
static Status launchTransformed(Kernel &k) {
  Runtime &r = runtime();
  unsigned threads = k.block.x * k.block.y * k.block.z;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    SMPART_RETURN_IF_ERROR(deviceCtxLocked(r, k.ctx));
    reclaimLocked(r);
    SMPART_RETURN_IF_ERROR(acquireSlotLocked(*k.ctx, k.slot));
  }
  if (k.fn) {
    int occ = 0;
    SMPART_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &occ, k.fn, static_cast<int>(threads), k.smem));
    // 0: the configuration cannot run at all; the launch below reports why.
    k.occupancy = occ > 0 ? static_cast<unsigned>(occ) : 1u;
  } else {
    k.occupancy = occupancyFromThreads(threads, k.ctx->info.max_threads_per_sm,
                                       k.ctx->info.max_blocks_per_sm);
  }
  Slot &s = *k.slot;
  initKnobs(s.host->knobs, k.occupancy);
  s.host->notices.last_block_taken = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Clear the state on the side stream, so that progress() copies (also on
  // the side stream) never see the previous user of the slot.
  SMPART_CUDA_CHECK(cudaMemsetAsync(s.state, 0, sizeof(State), k.ctx->side));
  SMPART_CUDA_CHECK(cudaEventRecord(s.zeroed, k.ctx->side));
  SMPART_CUDA_CHECK(cudaStreamWaitEvent(k.stream, s.zeroed, 0));
  // Relaunches wait for this point: the user's earlier work is done.
  SMPART_CUDA_CHECK(cudaEventRecord(s.started, k.stream));
  {
    std::lock_guard<std::mutex> lock(k.mu);
    SMPART_RETURN_IF_ERROR(k.launchInstance(k.ctasToLaunch(), k.stream));
  }
  SMPART_CUDA_CHECK(cudaEventRecord(s.first_done, k.stream));
  SMPART_CUDA_CHECK(launchJoin(s.state, k.total, k.stream));
  SMPART_CUDA_CHECK(cudaEventRecord(s.done, k.stream));
  return Status();
}

} // namespace detail

using detail::Kernel;

/// A kernel record for one launch, before anything is enqueued.
static std::shared_ptr<Kernel> newKernel(const KernelInfo &kernel, dim3 grid,
                                         dim3 block, std::size_t smem,
                                         cudaStream_t stream) {
  auto k = std::make_shared<Kernel>();
  k->name = kernel.name ? kernel.name : "(unnamed)";
  k->fn = kernel.fn;
  k->grid = grid;
  k->block = block;
  k->smem = smem;
  k->stream = stream;
  return k;
}

KernelHandle launch(const KernelInfo &kernel, dim3 grid, dim3 block,
                    std::size_t smem, cudaStream_t stream, Relaunch relaunch) {
  std::shared_ptr<Kernel> k = newKernel(kernel, grid, block, smem, stream);
  k->relaunch = std::move(relaunch);
  if (Status st = detail::validate(grid, k->total); !st.ok())
    return detail::failed(std::move(k), std::move(st));
  if (Status st = detail::launchTransformed(*k); !st.ok()) {
    // A slot whose kernel never got enqueued can be reused.
    if (k->slot && k->launched == 0) {
      std::lock_guard<std::mutex> lock(detail::runtime().mu);
      k->ctx->free_slots.push_back(k->slot);
      k->slot = nullptr;
    }
    return detail::failed(std::move(k), std::move(st));
  }
  {
    std::lock_guard<std::mutex> lock(detail::runtime().mu);
    detail::runtime().live.push_back(k);
  }
  return KernelHandle(std::move(k));
}

KernelHandle launchOpaque(const KernelInfo &kernel, dim3 grid, dim3 block,
                          std::size_t smem, cudaStream_t stream,
                          OpaqueLaunch launcher) {
  std::shared_ptr<Kernel> k = newKernel(kernel, grid, block, smem, stream);
  k->opaque = true;
  if (Status st = detail::validate(grid, k->total); !st.ok())
    return detail::failed(std::move(k), std::move(st));
  Status st = [&]() -> Status {
    detail::Runtime &r = detail::runtime();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      SMPART_RETURN_IF_ERROR(detail::deviceCtxLocked(r, k->ctx));
      detail::reclaimLocked(r);
    }
    SMPART_CUDA_CHECK(
        cudaEventCreateWithFlags(&k->opaque_done, cudaEventDisableTiming));
    launcher(grid, block, smem, stream);
    const cudaError_t err = cudaPeekAtLastError();
    if (err != cudaSuccess)
      return detail::cudaFailure(err, ("launch of kernel " + k->name).c_str(),
                                 __FILE__, __LINE__);
    k->launched = k->total;
    SMPART_CUDA_CHECK(cudaEventRecord(k->opaque_done, stream));
    return Status();
  }();
  if (!st.ok())
    return detail::failed(std::move(k), std::move(st));
  std::lock_guard<std::mutex> lock(detail::runtime().mu);
  detail::runtime().live.push_back(k);
  return KernelHandle(std::move(k));
}

Status init() {
  detail::Runtime &r = detail::runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  detail::DeviceCtx *ctx = nullptr;
  return detail::deviceCtxLocked(r, ctx);
}

Status getLastError() {
  Status s = std::move(detail::t_last_error);
  detail::t_last_error = Status();
  return s;
}

Status peekLastError() { return detail::t_last_error; }

std::vector<KernelHandle> activeKernels() {
  detail::Runtime &r = detail::runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<KernelHandle> out;
  for (const auto &k : r.live)
    if (!detail::eventDone(k->doneEvent()))
      out.emplace_back(k);
  return out;
}

} // namespace smpart
