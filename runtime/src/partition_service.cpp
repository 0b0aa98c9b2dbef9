// smpart::plannerFor(service::Client): the plan of smpartd as a partition's
// OpaquePlanner, and processPlanner(), the plan a partition follows when
// its options name none.
//
// The client answers from what the service last sent (its thread receives
// the opaque_target and opaque_held lines and caches them), so nothing
// here waits for a round trip: a launch boundary waits only where
// PartitionOptions::hold_timeout_ms asks Partition to poll the hold.
#include "smpart/controller_runtime.hpp"
#include "smpart/partition.hpp"
#include "smpart/service.hpp"

#include <utility>

namespace smpart {
namespace {

class ServicePlanner : public OpaquePlanner {
public:
  explicit ServicePlanner(std::shared_ptr<service::Client> C)
      : Client(std::move(C)) {}
  void add(const std::string &Name, unsigned MinSms, unsigned Granularity,
           double Weight) override {
    Client->declareOpaque({Name, MinSms, Granularity, Weight});
  }
  void remove(const std::string &Name) override { Client->removeOpaque(Name); }
  unsigned target(const std::string &Name) override {
    return Client->opaqueTarget(Name);
  }
  bool hold(const std::string &Name,
            const std::vector<unsigned> &SmIds) override {
    // Recorded either way (a reconnect sends it again). While no service
    // answers there is no plan to wait for: the process's kernels keep the
    // knobs they last got, and a boundary must not stall on a service that
    // is down.
    const bool Clear = Client->holdOpaque(Name, SmIds);
    return Clear || !Client->connected();
  }

private:
  std::shared_ptr<service::Client> Client;
};

} // namespace

std::shared_ptr<OpaquePlanner>
plannerFor(std::shared_ptr<service::Client> Client) {
  if (!Client)
    return nullptr;
  return std::make_shared<ServicePlanner>(std::move(Client));
}

std::shared_ptr<OpaquePlanner> processPlanner() {
  // Both are set once, when the environment is read, so one adapter
  // serves the process (confined launches ask on every launch).
  // SMPART_POLICY and SMPART_SERVICE exclude each other (the environment
  // set-up refuses both); the in-process controller wins all the same.
  static const std::shared_ptr<OpaquePlanner> Planner = [] {
    if (std::shared_ptr<OpaquePlanner> P = plannerFor(processController()))
      return P;
    return plannerFor(processServiceClient());
  }();
  return Planner;
}

} // namespace smpart
