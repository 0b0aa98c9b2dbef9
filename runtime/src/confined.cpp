// smpart::ConfinedStream (smpart/confined.hpp): the fork to a refused
// kernel's partition before its launch and the join after it.
#include "smpart/confined.hpp"

#include "kernel.hpp"
#include "kernel_names.hpp"

#include "smpart/controller_runtime.hpp"
#include "smpart/partition.hpp"

namespace smpart {

namespace {

/// One event for each direction per thread: a wait takes the event's
/// state when it is enqueued, so re-recording it for the next launch is
/// safe, and no event is created per launch.
struct Fences {
  cudaEvent_t before = nullptr, after = nullptr;
  bool ok = false;
  Fences() {
    ok =
        cudaEventCreateWithFlags(&before, cudaEventDisableTiming) ==
            cudaSuccess &&
        cudaEventCreateWithFlags(&after, cudaEventDisableTiming) == cudaSuccess;
  }
  // Never destroyed: the thread's last launch may still wait on them.
};

Fences &fences() {
  thread_local Fences *F = new Fences;
  return *F;
}

} // namespace

ConfinedStream::ConfinedStream(const char *Kernel, cudaStream_t Stream) noexcept
    : user_(Stream), launch_(Stream) {
  if (!detail::disabledByEnvironment())
    enter(Kernel);
}

ConfinedStream::ConfinedStream(const void *KernelFn,
                               cudaStream_t Stream) noexcept
    : user_(Stream), launch_(Stream) {
  if (detail::disabledByEnvironment())
    return;
  const detail::PointedKernel &K = detail::pointedKernel(KernelFn);
  if (K.known && !K.clustered)
    enter(K.name.c_str());
}

void ConfinedStream::enter(const char *Kernel) noexcept {
  // As launchConfined: a partition the program opened under this name,
  // else one opened on first use under a plan.
  const std::string Name = Kernel ? Kernel : "";
  std::shared_ptr<Partition> P = Partition::find(Name);
  if (!P && processPlanner())
    (void)Partition::open(Name, PartitionOptions{}, P);
  if (!P || !P->confined())
    return;
  // The launch boundary; the lane is this stream's alone, and leased
  // until the join below.
  const cudaStream_t Target = P->leaseLane(user_, lease_);
  Fences &F = fences();
  if (Target == user_ || !F.ok ||
      cudaEventRecord(F.before, user_) != cudaSuccess ||
      cudaStreamWaitEvent(Target, F.before, 0) != cudaSuccess) {
    Partition::returnLane(lease_);
    lease_ = nullptr;
    return;
  }
  launch_ = Target;
}

ConfinedStream::~ConfinedStream() {
  if (launch_ != user_) {
    Fences &F = fences();
    if (cudaEventRecord(F.after, launch_) == cudaSuccess)
      (void)cudaStreamWaitEvent(user_, F.after, 0);
  }
  Partition::returnLane(lease_);
}

} // namespace smpart
