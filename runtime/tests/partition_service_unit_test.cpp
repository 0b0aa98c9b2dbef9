// smpart::Partition in a tenant of smpartd (SMPART_SERVICE), without a GPU:
// the CUDA runtime stand-in of fake_cuda/, a fake green-context driver and
// a real service::Server on a socket in this process. Checked: with no
// planner in its options and no SMPART_POLICY, a partition declares itself
// to the service through the process's service::Client, takes the
// service's target at its next launch boundary (and only there), its
// holds reach the service (another tenant's rewritten kernel leaves its
// SMs, and the hold reads clear once that kernel applied), and closing it
// gives the SMs back. SMPART_SERVICE is read once per process: a binary of
// its own.
#include "fake_cuda/fake_cuda.hpp"
#include "fake_green_driver.hpp"
#include "green_contexts.hpp"
#include "locked_kernel.hpp"
#include "running_service.hpp"

#include "smpart/controller_runtime.hpp"
#include "smpart/partition.hpp"
#include "smpart/runtime.hpp"
#include "smpart/service.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace green = smpart::detail::green;
using smpart::testing::eventually;

// The fake driver: kSms SMs with the even ids 0..2*kSms-2, in groups of
// kGroup (minSmPartitionSize 4, smCoscheduledAlignment 4).
constexpr unsigned kSms = 20, kGroup = 4;

namespace fake = smpart_test::fake_green;

std::vector<unsigned> groupIds(unsigned g) { return fake::groupIds(g, kGroup); }

std::vector<unsigned> allIds() {
  return fake::groupsIds(kSms / kGroup, kGroup);
}

smpart::SmMask maskOf(const std::vector<unsigned> &ids) {
  smpart::SmMask m;
  for (unsigned id : ids)
    m.set(id);
  return m;
}

/// The socket SMPART_SERVICE names for the whole process.
const std::string &servicePath() {
  static const std::string path =
      smpart::testing::socketPath("partition-service");
  return path;
}

/// Makes this process a tenant of the service at servicePath() (once: the
/// runtime reads its environment once) on the fake GPU; its client.
std::shared_ptr<smpart::service::Client> tenantProcess() {
  static std::shared_ptr<smpart::service::Client> client = [] {
    ::setenv("SMPART_SERVICE", servicePath().c_str(), 1);
    ::unsetenv("SMPART_POLICY");
    fake::driver().sms = kSms;
    fake_cuda::reset(kSms);
    fake_cuda::setProbeRuns({allIds()});
    EXPECT_TRUE(smpart::init().ok());
    std::shared_ptr<smpart::service::Client> c = smpart::processServiceClient();
    // The runtime's probes so far, then one probe per group in group
    // order, then nothing more for contexts of several groups.
    std::vector<std::vector<unsigned>> runs(fake_cuda::probeLaunches(),
                                            allIds());
    for (unsigned g = 0; g < kSms / kGroup; ++g)
      runs.push_back(groupIds(g));
    runs.push_back({});
    fake_cuda::setProbeRuns(runs);
    green::Pool::resetForTesting(&fake::resolve);
    return c;
  }();
  return client;
}

TEST(PartitionUnderService, FollowsTheServicesTargetAndHoldsReachIt) {
  const std::string &path = servicePath();
  smpart::testing::Running service(path, "even", allIds());
  ASSERT_TRUE(service.S);
  std::shared_ptr<smpart::service::Client> client = tenantProcess();
  ASSERT_TRUE(client);
  ASSERT_FALSE(smpart::processController());
  ASSERT_TRUE(smpart::processPlanner());
  ASSERT_TRUE(eventually([&] { return client->connected(); }));

  // Another tenant runs a rewritten kernel on every SM; its device does not
  // acknowledge knobs until the test says so.
  smpart::service::Client kernels(path, allIds());
  auto k = std::make_shared<smpart::testing::LockedKernel>(1, "k", 1000000,
                                                           allIds());
  k->setApplied(false);
  kernels.arrive(k);
  ASSERT_TRUE(eventually([&] { return service.S->allocations().size() == 1; }));

  smpart::PartitionOptions o;
  o.sms = 4;             // what the options ask: the plan overrides it
  o.hold_timeout_ms = 0; // one hold per boundary; the test polls
  std::shared_ptr<smpart::Partition> p;
  ASSERT_TRUE(smpart::Partition::open("gemm", o, p).ok());
  ASSERT_TRUE(p && p->confined()) << (p ? p->reason() : "");

  // Declared through the process's client: the service answers a target.
  ASSERT_TRUE(eventually([&] { return client->opaqueTarget("gemm") != 0; }))
      << "the partition never declared itself to the service";
  const unsigned first = client->opaqueTarget("gemm");
  ASSERT_NE(first, 4u) << "a target equal to the options' proves nothing";
  ASSERT_EQ(first % kGroup, 0u);
  (void)p->stream(); // a launch boundary takes it
  smpart::PartitionState s = p->state();
  EXPECT_EQ(s.sms, first);
  ASSERT_TRUE(s.sm_ids_known);
  ASSERT_EQ(s.sm_ids.size(), first);

  // The hold reached the service: the other tenant's kernel leaves the
  // partition's SMs, but the hold is not clear before it applied.
  const smpart::SmMask held = maskOf(s.sm_ids);
  EXPECT_TRUE(eventually([&] { return (k->mask() & held).none(); }));
  EXPECT_FALSE(p->state().held);
  k->setApplied(true);
  EXPECT_TRUE(eventually([&] {
    (void)p->stream();
    return p->state().held;
  }));
  EXPECT_TRUE((k->mask() & held).none());

  // A second kernel: the service's target changes, and the partition
  // follows at its next launch boundary, not before.
  auto k2 = std::make_shared<smpart::testing::LockedKernel>(2, "k2", 1000000,
                                                            allIds());
  kernels.arrive(k2);
  ASSERT_TRUE(eventually([&] { return client->opaqueTarget("gemm") != first; }))
      << "the target stayed " << first;
  const unsigned second = client->opaqueTarget("gemm");
  const unsigned long long switches = p->state().switches;
  EXPECT_EQ(p->state().sms, first);
  (void)p->stream();
  EXPECT_EQ(p->state().sms, second);
  EXPECT_EQ(p->state().switches, switches + 1);

  // Closed: the partition leaves the service's plan and the kernels get
  // its SMs back.
  smpart::Partition::close("gemm");
  EXPECT_EQ(client->opaqueTarget("gemm"), 0u);
  EXPECT_TRUE(
      eventually([&] { return (k->mask() | k2->mask()).count() == kSms; }));
}

// A service that is down never stalls a launch boundary: there is no
// plan to wait for (the hold is recorded and sent once it answers, with
// the declaration, and then the partition follows its target).
TEST(PartitionUnderService, ServiceDownDoesNotStallABoundary) {
  std::shared_ptr<smpart::service::Client> client = tenantProcess();
  ASSERT_TRUE(client);
  ASSERT_TRUE(eventually([&] { return !client->connected(); }));
  smpart::PartitionOptions o;
  o.sms = 8;
  o.hold_timeout_ms = 20000; // waited for in full: a warning
  testing::internal::CaptureStderr();
  std::shared_ptr<smpart::Partition> p;
  ASSERT_TRUE(smpart::Partition::open("offline", o, p).ok());
  ASSERT_TRUE(p && p->confined()) << (p ? p->reason() : "");
  (void)p->stream();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("did not leave"), std::string::npos) << err;
  EXPECT_EQ(p->state().sms, 8u); // the options' share: no plan yet

  // The service comes (back): the client declares the partition and sends
  // its hold again; the next boundary takes the service's target.
  smpart::testing::Running service(servicePath(), "even", allIds());
  ASSERT_TRUE(service.S);
  ASSERT_TRUE(eventually([&] { return client->opaqueTarget("offline") != 0; }));
  const unsigned target = client->opaqueTarget("offline");
  EXPECT_NE(target, 8u); // alone in the plan
  (void)p->stream();
  EXPECT_EQ(p->state().sms, target);
  EXPECT_TRUE(eventually([&] {
    (void)p->stream();
    return p->state().held;
  }));
  smpart::Partition::close("offline");
}

} // namespace
