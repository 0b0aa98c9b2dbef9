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

#include <memory>

namespace smpart {

/// A running kernel's knobs and progress as the controller sees them.
std::shared_ptr<KernelControl> controlOf(KernelHandle Handle);

/// A launch observer that feeds arrivals (before the kernel is enqueued),
/// early notifications and departures of transformed kernels to \p C.
std::shared_ptr<LaunchObserver> observerFor(std::shared_ptr<Controller> C);

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
