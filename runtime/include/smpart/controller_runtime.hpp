// smpart::Controller on this process's launches: what SMPART_POLICY sets up
// (runtime/controller/README.md), for programs and benchmarks that build
// their own controller (a policy, profiles measured in the same run):
//
//   auto c = std::make_shared<smpart::Controller>(policy, profiles,
//   info.sm_ids); smpart::setLaunchObserver(smpart::observerFor(c));
//
// Needs the CUDA runtime (libsmpart); controller.hpp itself is CUDA-free.
#pragma once

#include "smpart/controller.hpp"
#include "smpart/runtime.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace smpart {

/// A running kernel's knobs and progress as the controller sees them.
std::shared_ptr<KernelControl> controlOf(KernelHandle Handle);

/// A launch observer that feeds arrivals (before the kernel is enqueued),
/// early notifications and departures of transformed kernels to \p C.
std::shared_ptr<LaunchObserver> observerFor(std::shared_ptr<Controller> C);

/// Closes \p C's epochs (Controller::epoch) every ControllerOptions::
/// epoch_us on a thread of its own, from construction until stop() or
/// destruction: what SMPART_POLICY sets up for the process controller.
/// An online policy decides only at epochs. An epoch reads the progress
/// the runtime mirrors to host memory and makes no CUDA call, so the
/// launch path never waits for one.
class EpochTimer {
public:
  explicit EpochTimer(std::shared_ptr<Controller> C);
  ~EpochTimer();
  EpochTimer(const EpochTimer &) = delete;
  EpochTimer &operator=(const EpochTimer &) = delete;
  /// Ends the epochs; returns once the last one is closed. Called from
  /// the timer's own thread (a warn callback during an epoch) it returns
  /// without waiting; call it from one thread at a time.
  void stop();

private:
  void run();
  std::shared_ptr<Controller> C;
  std::mutex Mu;
  std::condition_variable Cv;
  bool Stop = false;
  std::thread Worker; // last: starts once the members above exist
};

/// The controller SMPART_POLICY made for this process (reading the
/// environment first if no launch did yet), or null.
std::shared_ptr<Controller> processController();

namespace service {
class Client;
}
/// The smpartd tenant SMPART_SERVICE made for this process, or null. Its
/// declareOpaque / opaqueTarget / holdOpaque / removeOpaque plan opaque
/// partitions with the service, as the controller's calls do in-process.
std::shared_ptr<service::Client> processServiceClient();

} // namespace smpart
