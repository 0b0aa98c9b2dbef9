// smpart::Partition without a GPU: the CUDA runtime stand-in of
// fake_cuda/ and a fake green-context driver behind an injected resolver.
// Checked: a driver without a green-context symbol falls back with one line
// and a usable stream; sizes follow the device's minimum partition size and
// alignment; the pool gives the nearest allowed size; a plan's change takes
// effect only at a launch boundary, behind a fence that orders the old
// stream's work first; launchConfined is ordered with the caller's stream.
#include "fake_cuda/fake_cuda.hpp"
#include "fake_green_driver.hpp"
#include "green_contexts.hpp"
#include "kernel.hpp"
#include "kernel_names.hpp"

#include "smpart/confined.hpp"
#include "smpart/partition.hpp"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace green = smpart::detail::green;

// The fake driver: a device of kSms SMs (real ids: the even numbers
// 0..2*kSms-2), minSmPartitionSize 3 and smCoscheduledAlignment 2, so
// the group size is 4 and there are 5 groups.
constexpr unsigned kSms = 20, kMin = 3, kAlign = 2, kGroup = 4;

namespace fake = smpart_test::fake_green;

/// Real ids of group g: four even numbers.
std::vector<unsigned> groupIds(unsigned g) { return fake::groupIds(g, kGroup); }

/// Real ids of every group, in group order.
std::vector<unsigned> allIds() {
  return fake::groupsIds(kSms / kGroup, kGroup);
}

/// A plan that the test sets by hand, recording what it was told.
class FakePlanner : public smpart::OpaquePlanner {
public:
  unsigned target_sms = 0;
  bool acknowledge = true;
  std::vector<std::vector<unsigned>> holds;
  std::vector<std::string> added, removed;
  unsigned min_sms = 0, granularity = 0;
  void add(const std::string &name, unsigned min, unsigned gran,
           double) override {
    added.push_back(name);
    min_sms = min;
    granularity = gran;
  }
  void remove(const std::string &name) override { removed.push_back(name); }
  unsigned target(const std::string &) override { return target_sms; }
  bool hold(const std::string &, const std::vector<unsigned> &ids) override {
    holds.push_back(ids);
    return acknowledge;
  }
};

/// A kernel the fake runs: starts, stays while held (tags that begin with
/// "held"), then finishes.
void heldKernel() {}
struct Gate {
  std::atomic<bool> hold{false};
  std::vector<std::string> order; // starts and finishes, in order
};
Gate *g_gate = nullptr;

void registerHeld(Gate &gate) {
  g_gate = &gate;
  fake_cuda::registerKernel(
      reinterpret_cast<const void *>(&heldKernel), [](void **args, dim3, dim3) {
        const std::string tag = *static_cast<const char **>(args[0]);
        fake_cuda::KernelRun r;
        r.start = [tag] { g_gate->order.push_back("start " + tag); };
        r.held = [tag] {
          return tag.rfind("held", 0) == 0 && g_gate->hold.load();
        };
        r.finish = [tag] { g_gate->order.push_back("end " + tag); };
        return r;
      });
}

cudaError_t launchTagged(const char *tag, cudaStream_t s) {
  void *args[] = {&tag};
  return cudaLaunchKernel(reinterpret_cast<const void *>(&heldKernel), dim3(1),
                          dim3(32), args, 0, s);
}

class PartitionTest : public ::testing::Test {
protected:
  void SetUp() override {
    fake_cuda::reset(kSms);
    fake::driver() = fake::Driver{};
    fake::driver().sms = kSms;
    fake::driver().min_partition = kMin;
    fake::driver().alignment = kAlign;
    // The runtime's own SM-id probe first (however many runs it made),
    // then one probe per group, in group order.
    const std::vector<unsigned> all = allIds();
    fake_cuda::setProbeRuns({all});
    ASSERT_TRUE(smpart::init().ok());
    smpart::DeviceInfo info;
    ASSERT_TRUE(smpart::deviceInfo(info).ok());
    std::vector<std::vector<unsigned>> runs(fake_cuda::probeLaunches(), all);
    for (unsigned g = 0; g < kSms / kGroup; ++g)
      runs.push_back(groupIds(g));
    // Contexts of several groups probe themselves too; here they see
    // nothing beyond their groups unless a test says otherwise.
    runs.push_back({});
    fake_cuda::setProbeRuns(runs);
    group_runs_ = runs.size() - 1;
    green::Pool::resetForTesting(&fake::resolve);
  }
  void TearDown() override {
    for (const std::string &n : opened)
      smpart::Partition::close(n);
  }
  std::shared_ptr<smpart::Partition> open(const std::string &name,
                                          smpart::PartitionOptions o) {
    std::shared_ptr<smpart::Partition> p;
    EXPECT_TRUE(smpart::Partition::open(name, o, p).ok());
    opened.push_back(name);
    return p;
  }
  /// Opens `name` following `plan`, which asks for `sms` SMs.
  std::shared_ptr<smpart::Partition>
  openPlanned(const std::string &name, const std::shared_ptr<FakePlanner> &plan,
              unsigned sms) {
    plan->target_sms = sms;
    smpart::PartitionOptions o;
    o.planner = plan;
    return open(name, o);
  }
  /// Opens `name` without a plan, as a program opens a refused kernel's.
  std::shared_ptr<smpart::Partition> openUnplanned(const std::string &name) {
    smpart::PartitionOptions o;
    o.follow_plan = false;
    return open(name, o);
  }
  std::vector<std::string> opened;
  std::size_t group_runs_ = 0; // probe runs before the first combination's
};

TEST(PartitionSizes, FollowTheDevicesMinimumAndAlignment) {
  EXPECT_EQ(green::groupSize(8, 8), 8u); // sm_90
  EXPECT_EQ(green::groupSize(3, 2), 4u); // minimum rounded up to alignment
  EXPECT_EQ(green::groupSize(4, 2), 4u); // sm_80
  EXPECT_EQ(green::groupSize(0, 0), 1u); // nothing reported: any size
  EXPECT_EQ(green::allowedSizes(8, 3), (std::vector<unsigned>{8, 16, 24}));
  const std::vector<unsigned> sizes = green::allowedSizes(8, 16);
  EXPECT_EQ(green::nearestAllowed(sizes, 1), 8u);     // below the minimum
  EXPECT_EQ(green::nearestAllowed(sizes, 19), 16u);   // nearest below
  EXPECT_EQ(green::nearestAllowed(sizes, 21), 24u);   // nearest above
  EXPECT_EQ(green::nearestAllowed(sizes, 20), 24u);   // a tie goes up
  EXPECT_EQ(green::nearestAllowed(sizes, 500), 128u); // the whole split
  EXPECT_EQ(green::nearestAllowed({}, 5), 0u);
}

TEST(PartitionDriverTable, MissingSymbolIsNamed) {
  const auto without = [](std::string name) {
    return [name](const char *symbol, unsigned v) -> void * {
      return name == symbol ? nullptr : fake::resolve(symbol, v);
    };
  };
  EXPECT_TRUE(green::loadDriverTable(&fake::resolve).usable());
  EXPECT_EQ(green::loadDriverTable(without("cuGreenCtxCreate")).missing,
            "cuGreenCtxCreate");
  EXPECT_EQ(green::loadDriverTable(without("cuDeviceGetDevResource")).missing,
            "cuDeviceGetDevResource");
  // A 12.4 driver has no cuGreenCtxStreamCreate: the table needs the
  // current-context route instead, which the fake lacks.
  EXPECT_EQ(green::loadDriverTable(without("cuGreenCtxStreamCreate")).missing,
            "cuGreenCtxStreamCreate");
  EXPECT_FALSE(green::loadDriverTable(nullptr).usable());
  // ... and a 12.4 driver that has that route is usable.
  const auto on_12_4 = [](const char *symbol, unsigned v) -> void * {
    static int stub;
    const std::string s = symbol;
    if (s == "cuGreenCtxStreamCreate")
      return nullptr;
    if (s == "cuCtxFromGreenCtx" || s == "cuCtxPushCurrent" ||
        s == "cuCtxPopCurrent" || s == "cuStreamCreate")
      return &stub;
    return fake::resolve(symbol, v);
  };
  const green::DriverTable t = green::loadDriverTable(on_12_4);
  EXPECT_TRUE(t.usable()) << t.missing;
  EXPECT_EQ(t.streamCreate, nullptr);
  EXPECT_NE(t.fromGreenCtx, nullptr);
}

TEST_F(PartitionTest, MissingSymbolFallsBackWithOneLineAndAUsableStream) {
  fake::driver().missing = {"cuGreenCtxCreate"};
  testing::internal::CaptureStderr();
  auto a = open("fallback_a", {});
  auto b = open("fallback_b", {});
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(a->confined());
  EXPECT_FALSE(b->confined());
  EXPECT_NE(a->reason().find("cuGreenCtxCreate"), std::string::npos);
  // One line for the process, naming the missing symbol.
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("green contexts unavailable"), std::string::npos) << err;
  EXPECT_NE(err.find("cuGreenCtxCreate"), std::string::npos) << err;
  // The stream is an ordinary one: work on it runs.
  Gate gate;
  registerHeld(gate);
  cudaStream_t s = a->stream();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(launchTagged("work", s), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  EXPECT_EQ(gate.order, (std::vector<std::string>{"start work", "end work"}));
  EXPECT_EQ(a->state().sms, 0u);
  EXPECT_EQ(fake::driver().contexts, 0u);
}

// The green contexts belong to the device current when the first partition
// set them up: a partition opened on another device runs unconfined, says
// why, and sends nothing to the first device's contexts.
TEST_F(PartitionTest, PartitionOnAnotherDeviceRunsUnconfined) {
  auto first = open("device0", {});
  ASSERT_TRUE(first && first->confined());
  const unsigned contexts = fake::driver().contexts;
  fake_cuda::setDeviceCount(2);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  testing::internal::CaptureStderr();
  auto other = open("device1", {});
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->confined());
  EXPECT_NE(other->reason().find("device 0 only"), std::string::npos)
      << other->reason();
  EXPECT_NE(err.find("device1"), std::string::npos) << err;
  EXPECT_EQ(other->state().sms, 0u);
  EXPECT_EQ(fake::driver().contexts, contexts) << "no green context made";
  EXPECT_TRUE(first->confined());
}

TEST_F(PartitionTest, SizeIsTheNearestAllowedAndIdsAreTheGroupsProbed) {
  smpart::PartitionOptions o;
  o.sms = 10; // 8 and 12 are as near: the larger
  o.follow_plan = false;
  auto p = open("sized", o);
  ASSERT_TRUE(p && p->confined()) << (p ? p->reason() : "");
  const smpart::PartitionState s = p->state();
  EXPECT_EQ(s.sms, 12u);
  ASSERT_TRUE(s.sm_ids_known);
  EXPECT_EQ(s.sm_ids,
            fake::groupsIds(3, kGroup)); // the real ids of the groups it owns
  // A second tenant gets the groups left, disjoint from the first.
  smpart::PartitionOptions o2;
  o2.sms = 20;
  o2.follow_plan = false;
  auto q = open("sized_second", o2);
  ASSERT_TRUE(q && q->confined());
  const smpart::PartitionState s2 = q->state();
  EXPECT_EQ(s2.sms, 8u);
  for (unsigned id : s2.sm_ids)
    EXPECT_EQ(std::count(s.sm_ids.begin(), s.sm_ids.end(), id), 0) << id;
}

TEST_F(PartitionTest, CombinedContextsOwnProbeAddsTheIdsItSaw) {
  // Should the driver place a combination of groups elsewhere than its
  // groups, its own probe says so and those ids are held too.
  std::vector<std::vector<unsigned>> runs(group_runs_);
  const std::vector<unsigned> all = allIds();
  for (std::size_t r = 0; r + kSms / kGroup < group_runs_; ++r)
    runs[r] = all;
  for (unsigned g = 0; g < kSms / kGroup; ++g)
    runs[group_runs_ - kSms / kGroup + g] = groupIds(g);
  runs.push_back({0, 2, 4, 6, 8, 10, 12, 99}); // 99: not in groups 0 and 1
  runs.push_back({});
  fake_cuda::setProbeRuns(runs);
  auto plan = std::make_shared<FakePlanner>();
  auto p = openPlanned("placed_elsewhere", plan, 8);
  ASSERT_TRUE(p && p->confined()) << (p ? p->reason() : "");
  std::vector<unsigned> want = fake::groupsIds(2, kGroup);
  want.push_back(99);
  EXPECT_EQ(p->state().sm_ids, want);
  ASSERT_FALSE(plan->holds.empty());
  EXPECT_EQ(plan->holds.back(), want);
}

TEST_F(PartitionTest, ShareChangesOnlyAtALaunchBoundaryBehindAFence) {
  auto plan = std::make_shared<FakePlanner>();
  auto p = openPlanned("planned", plan, 8);
  ASSERT_TRUE(p && p->confined()) << (p ? p->reason() : "");
  // Declared with the device's step and minimum.
  EXPECT_EQ(plan->added, (std::vector<std::string>{"planned"}));
  EXPECT_EQ(plan->granularity, kGroup);
  EXPECT_EQ(plan->min_sms, kGroup);
  EXPECT_EQ(p->state().sms, 8u);
  ASSERT_FALSE(plan->holds.empty());
  EXPECT_EQ(plan->holds.back().size(), 8u);

  Gate gate;
  registerHeld(gate);
  cudaStream_t old_stream = p->stream();
  gate.hold = true;
  ASSERT_EQ(launchTagged("held", old_stream), cudaSuccess);

  // The plan grows the tenant: nothing changes until the next boundary.
  const std::size_t holds = plan->holds.size();
  plan->target_sms = 15; // nearest allowed: 16
  EXPECT_EQ(p->state().sms, 8u);
  EXPECT_EQ(p->currentStream(), old_stream);
  const auto switches = p->state().switches;
  EXPECT_EQ(plan->holds.size(), holds); // no boundary, no hold

  cudaStream_t new_stream = p->stream(); // the boundary
  EXPECT_NE(new_stream, old_stream);
  EXPECT_EQ(p->state().sms, 16u);
  EXPECT_EQ(p->state().switches, switches + 1);
  ASSERT_GT(plan->holds.size(), holds);
  // While the old stream's work may run, its SMs are held too; the new
  // set covers them here (grown from the same groups).
  EXPECT_EQ(plan->holds.back().size(), 16u);

  // The fence: work on the new stream waits for the old stream's.
  ASSERT_EQ(launchTagged("after", new_stream), cudaSuccess);
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{"start held"}));
  gate.hold = false;
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{"start held", "end held",
                                                  "start after", "end after"}));

  // Back to 8: the pooled context of the same groups, not a new one.
  const unsigned made = fake::driver().contexts;
  plan->target_sms = 8;
  EXPECT_EQ(p->stream(), old_stream);
  EXPECT_EQ(fake::driver().contexts, made);
}

// A capture on the partition's own stream keeps the partition where it
// is until the capture ends: a switch's fence would pull the new stream
// into that capture.
TEST_F(PartitionTest, CaptureOnThePartitionsStreamDefersASwitch) {
  auto plan = std::make_shared<FakePlanner>();
  auto p = openPlanned("captured_stream", plan, 8);
  ASSERT_TRUE(p && p->confined());
  const cudaStream_t s = p->stream();
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  plan->target_sms = 16;
  std::thread other([&] { EXPECT_TRUE(p->beginLaunch().ok()); });
  other.join();
  EXPECT_EQ(p->state().sms, 8u);
  EXPECT_EQ(p->currentStream(), s);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  const cudaStream_t grown = p->stream();
  EXPECT_EQ(p->state().sms, 16u);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(grown, &cs), cudaSuccess);
  EXPECT_EQ(cs, cudaStreamCaptureStatusNone);
  (void)cudaGraphDestroy(graph);
}

TEST_F(PartitionTest, ShrinkHoldsTheOldSmsWhileOldWorkRuns) {
  auto plan = std::make_shared<FakePlanner>();
  auto p = openPlanned("shrinking", plan, 12);
  ASSERT_TRUE(p && p->confined());
  Gate gate;
  registerHeld(gate);
  gate.hold = true;
  ASSERT_EQ(launchTagged("held", p->stream()), cudaSuccess);
  plan->target_sms = 4;
  (void)p->stream();
  EXPECT_EQ(p->state().sms, 4u);
  EXPECT_EQ(plan->holds.back().size(), 12u); // old work still runs there
  gate.hold = false;
  fake_cuda::pump();
  (void)p->stream();
  EXPECT_EQ(plan->holds.back(), groupIds(0)); // only its own now
}

TEST_F(PartitionTest, NewLaunchesKeepOffTheHeldSmsUntilClose) {
  // The SMs a plan keeps for the partition are reserved from the first
  // hold, also where the plan has not confirmed it: a rewritten kernel
  // that starts before the planner has seen it must not take them.
  auto plan = std::make_shared<FakePlanner>();
  plan->acknowledge = false;
  smpart::PartitionOptions o;
  o.planner = plan;
  plan->target_sms = 4;
  auto p = open("reserving", o);
  ASSERT_TRUE(p && p->confined());
  ASSERT_TRUE(p->beginLaunch().ok());
  smpart::SmMask want;
  for (unsigned id : groupIds(0))
    want.set(id);
  EXPECT_EQ(smpart::detail::reservedSms(0), want);
  smpart::Partition::close("reserving");
  EXPECT_TRUE(smpart::detail::reservedSms(0).none());
}

TEST_F(PartitionTest, UnacknowledgedHoldGoesAheadAfterItsDeadlineOnce) {
  auto plan = std::make_shared<FakePlanner>();
  plan->target_sms = 4;
  plan->acknowledge = false;
  smpart::PartitionOptions o;
  o.planner = plan;
  o.hold_timeout_ms = 5;
  testing::internal::CaptureStderr();
  auto p = open("stubborn", o);
  ASSERT_TRUE(p && p->confined());
  (void)p->stream();
  // The same ids again: asked once more, not waited for a second time.
  const std::size_t asked = plan->holds.size();
  (void)p->stream();
  EXPECT_EQ(plan->holds.size(), asked + 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("launching anyway"), std::string::npos) << err;
  EXPECT_FALSE(p->state().held);
  EXPECT_EQ(p->state().hold_timeouts, 1u);
  EXPECT_GT(p->state().hold_wait_ms, 0.0);
}

TEST_F(PartitionTest, BoundaryAsksForTheHoldOnceAndDoesNotWaitByDefault) {
  // A boundary must not make the caller's thread wait for rewritten
  // kernels on the GPU: it asks once (which moves them off) and returns;
  // the next boundary learns whether they left.
  auto plan = std::make_shared<FakePlanner>();
  plan->target_sms = 4;
  plan->acknowledge = false;
  smpart::PartitionOptions o;
  o.planner = plan;
  testing::internal::CaptureStderr();
  auto p = open("async_hold", o);
  ASSERT_TRUE(p && p->confined());
  std::size_t asked = plan->holds.size();
  (void)p->stream();
  EXPECT_EQ(plan->holds.size(), asked + 1); // asked, never polled
  EXPECT_FALSE(p->state().held);
  EXPECT_EQ(p->state().hold_wait_ms, 0.0);
  EXPECT_EQ(p->state().hold_timeouts, 0u);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  plan->acknowledge = true; // the kernels acknowledged meanwhile
  asked = plan->holds.size();
  (void)p->stream();
  EXPECT_EQ(plan->holds.size(), asked + 1);
  EXPECT_TRUE(p->state().held);
}

TEST_F(PartitionTest, OneTenantPerNameAndCloseFreesItsSms) {
  auto plan = std::make_shared<FakePlanner>();
  plan->target_sms = 20; // everything
  smpart::PartitionOptions o;
  o.planner = plan;
  std::shared_ptr<smpart::Partition> a, b;
  std::thread t([&] { smpart::Partition::open("shared_name", o, a); });
  smpart::Partition::open("shared_name", o, b);
  t.join();
  opened.push_back("shared_name");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(plan->added.size(), 1u); // declared once
  EXPECT_EQ(a->state().sms, kSms);
  Gate gate;
  registerHeld(gate);
  gate.hold = true;
  ASSERT_EQ(launchTagged("held", a->stream()), cudaSuccess);
  // Closing waits (bounded) for queued work, leaves the plan and frees the
  // SMs; the handle then gives an ordinary stream ordered after that work.
  gate.hold = false;
  smpart::Partition::close("shared_name");
  EXPECT_EQ(plan->removed, (std::vector<std::string>{"shared_name"}));
  EXPECT_FALSE(a->confined());
  EXPECT_NE(a->stream(), nullptr);
  smpart::PartitionOptions all;
  all.sms = kSms;
  all.follow_plan = false;
  auto c = open("after_close", all);
  ASSERT_TRUE(c && c->confined());
  EXPECT_EQ(c->state().sms, kSms); // every group was free again
}

TEST_F(PartitionTest, ConfinedLaunchIsOrderedWithTheCallersStream) {
  Gate gate;
  registerHeld(gate);
  cudaStream_t user = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking),
            cudaSuccess);
  // Without a plan a refused kernel is confined only to a partition the
  // program opened under its name.
  auto part = openUnplanned("refused_kernel");
  ASSERT_TRUE(part && part->confined());
  cudaStream_t unplanned_used = nullptr;
  smpart::launchConfined(
      {"not_opened", nullptr}, dim3(1), dim3(32), 0, user,
      [&](dim3, dim3, std::size_t, cudaStream_t s) { unplanned_used = s; });
  EXPECT_EQ(unplanned_used, user);
  EXPECT_FALSE(smpart::Partition::find("not_opened"));
  gate.hold = true;
  ASSERT_EQ(launchTagged("held", user), cudaSuccess);
  cudaStream_t used = nullptr;
  smpart::KernelHandle h = smpart::launchConfined(
      {"refused_kernel", nullptr}, dim3(1), dim3(32), 0, user,
      [&](dim3, dim3, std::size_t, cudaStream_t s) {
        used = s;
        (void)launchTagged("confined", s);
      });
  ASSERT_TRUE(h.valid());
  EXPECT_TRUE(h.opaque());
  ASSERT_EQ(launchTagged("later", user), cudaSuccess);
  auto p = smpart::Partition::find("refused_kernel");
  ASSERT_TRUE(p && p->confined());
  EXPECT_NE(used, user); // on the partition's lane for `user`
  EXPECT_EQ(used, p->streamFor(user));
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{"start held"}));
  gate.hold = false;
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{
                            "start held", "end held", "start confined",
                            "end confined", "start later", "end later"}));
}

/// A new non-blocking stream.
cudaStream_t newStream() {
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  return s;
}

/// A refused kernel's launch as launchConfined makes it, tagged.
smpart::KernelHandle launchRefused(const char *tag, cudaStream_t s,
                                   cudaStream_t *used = nullptr) {
  return smpart::launchConfined(
      {"refused_kernel", nullptr}, dim3(1), dim3(32), 0, s,
      [tag, used](dim3, dim3, std::size_t, cudaStream_t lane) {
        if (used)
          *used = lane;
        (void)launchTagged(tag, lane);
      });
}

// Confined work of two streams (or of two threads' per-thread default
// streams) never waits for the other's: each caller stream has its own
// lane in the partition's green context.
TEST_F(PartitionTest, ConfinedLaunchesOfTwoStreamsNeverWaitForEachOther) {
  Gate gate;
  registerHeld(gate);
  const cudaStream_t a = newStream(), b = newStream();
  auto part = openUnplanned("refused_kernel");
  ASSERT_TRUE(part && part->confined());
  gate.hold = true;
  cudaStream_t lane_a = nullptr, lane_b = nullptr;
  ASSERT_TRUE(launchRefused("held", a, &lane_a).valid());
  ASSERT_TRUE(launchRefused("other stream", b, &lane_b).valid());
  // What smpart-transform writes: the same lanes.
  ASSERT_EQ(launchTagged("tool", smpart::confined("refused_kernel", b)),
            cudaSuccess);
  EXPECT_NE(lane_a, a);
  EXPECT_NE(lane_b, b);
  EXPECT_NE(lane_a, lane_b);
  EXPECT_EQ(part->streamFor(b), lane_b);
  ASSERT_TRUE(launchRefused("held per thread", cudaStreamPerThread).valid());
  std::thread other(
      [] { (void)launchRefused("other thread", cudaStreamPerThread); });
  other.join();
  fake_cuda::pump();
  EXPECT_EQ(gate.order,
            (std::vector<std::string>{
                "start held", "start other stream", "end other stream",
                "start tool", "end tool", "start held per thread",
                "start other thread", "end other thread"}));
  gate.hold = false;
  fake_cuda::pump();
  ASSERT_EQ(gate.order.size(), 10u);
  EXPECT_EQ(std::count(gate.order.begin(), gate.order.end(), "end held"), 1);
  EXPECT_EQ(
      std::count(gate.order.begin(), gate.order.end(), "end held per thread"),
      1);
}

// A launch through a kernel pointer (smpart-transform's `fp<<<..., s>>>`
// -> `fp<<<..., smpart::confined(fp, s)>>>`) runs on the partition of the
// kernel the pointer holds, named as a direct launch of it names it, and
// is ordered with the caller's stream; a pointer CUDA does not know as a
// kernel launches on the caller's stream, and leaves no error behind.
TEST_F(PartitionTest, LaunchThroughAKernelPointerRunsOnItsKernelsPartition) {
  Gate gate;
  registerHeld(gate);
  fake_cuda::nameKernel(reinterpret_cast<const void *>(&heldKernel),
                        "_ZN3ops6scaledILi4EEEvv"); // void ops::scaled<4>()
  const cudaStream_t s = newStream();
  auto part = openUnplanned("ops::scaled");
  ASSERT_TRUE(part && part->confined());
  gate.hold = true;
  ASSERT_EQ(launchTagged("held", s), cudaSuccess);
  void (*fp)() = heldKernel;
  cudaStream_t used = nullptr;
  {
    smpart::ConfinedStream c = smpart::confined(fp, s);
    used = c;
    ASSERT_EQ(launchTagged("through pointer", c), cudaSuccess);
  }
  ASSERT_EQ(launchTagged("later", s), cudaSuccess);
  EXPECT_NE(used, s);
  EXPECT_EQ(used, part->streamFor(s));
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{"start held"}));
  gate.hold = false;
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{"start held", "end held",
                                                  "start through pointer",
                                                  "end through pointer",
                                                  "start later", "end later"}));

  void (*unknown)(int) = [](int) {};
  EXPECT_EQ(static_cast<cudaStream_t>(smpart::confined(unknown, s)), s);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// A kernel whose CTAs form clusters runs on every SM through a pointer
// too, as the tool leaves its direct launches: a partition smaller than
// the GPU may not hold its clusters.
TEST_F(PartitionTest, LaunchThroughAPointerToAClusteredKernelRunsFree) {
  void (*clustered)(float) = [](float) {};
  const void *fn = reinterpret_cast<const void *>(clustered);
  fake_cuda::nameKernel(fn, "_Z9clusteredf");
  fake_cuda::requireCluster(fn, 2);
  auto part = openUnplanned("clustered");
  ASSERT_TRUE(part && part->confined());
  const cudaStream_t s = newStream();
  EXPECT_EQ(static_cast<cudaStream_t>(smpart::confined(clustered, s)), s);
}

TEST(KernelNames, AreTheNamesADirectLaunchUses) {
  using smpart::detail::qualifiedKernelName;
  EXPECT_EQ(qualifiedKernelName("_Z5copyAPfPKfi"), "copyA");
  EXPECT_EQ(qualifiedKernelName("_ZN3ops6scaledILi4EEEvPf"), "ops::scaled");
  EXPECT_EQ(qualifiedKernelName("_ZN2ns1kINS_4PairIifEEEEvi"), "ns::k");
  EXPECT_EQ(qualifiedKernelName("_Z1kILi3EEvPFviE"),
            "k"); // k<3>(void (*)(int))
  EXPECT_EQ(qualifiedKernelName("_Z1kIXgtLi1ELi2EEEvv"), "k"); // k<((1)>(2))>
  EXPECT_EQ(qualifiedKernelName("_ZN12_GLOBAL__N_14stepEv"),
            "(anonymous namespace)::step");
  EXPECT_EQ(qualifiedKernelName("plain_c"), "plain_c");        // extern "C"
  EXPECT_EQ(qualifiedKernelName("_ZN3OpsIfE1kEPf"), "Ops::k"); // Ops<float>
  EXPECT_EQ(qualifiedKernelName("f"), "f"); // not the type `f` encodes
  // Internal linkage under separate compilation; the file name may hold
  // a `_Z` (Zgemm.cu) before the symbol's.
  EXPECT_EQ(qualifiedKernelName("__nv_static_51__8f2a_k_cu__Z4stepPf"), "step");
  EXPECT_EQ(qualifiedKernelName("__nv_static_53__8f2a_Zgemm_cu__Z4stepPf"),
            "step");
  EXPECT_EQ(qualifiedKernelName(nullptr), "");
}

// A capture on one stream takes in that stream's lane only: another
// stream's confined launches meanwhile run at once, confined, and the
// capture ends with a graph that replays its own launches.
TEST_F(PartitionTest, CaptureTakesInOnlyTheCapturingStreamsLane) {
  Gate gate;
  registerHeld(gate);
  const cudaStream_t cap = newStream(), eager = newStream();
  auto part = openUnplanned("refused_kernel");
  ASSERT_TRUE(part && part->confined());
  ASSERT_EQ(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  ASSERT_TRUE(launchRefused("captured", cap).valid());
  ASSERT_EQ(
      launchTagged("tool captured", smpart::confined("refused_kernel", cap)),
      cudaSuccess);
  cudaStream_t used = nullptr;
  ASSERT_TRUE(launchRefused("eager", eager, &used).valid());
  ASSERT_EQ(
      launchTagged("tool eager", smpart::confined("refused_kernel", eager)),
      cudaSuccess);
  EXPECT_NE(used, eager); // confined, not fallen back to the caller's stream
  fake_cuda::pump();
  EXPECT_EQ(gate.order,
            (std::vector<std::string>{"start eager", "end eager",
                                      "start tool eager", "end tool eager"}));
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(cap, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, cap), cudaSuccess);
  fake_cuda::pump();
  EXPECT_EQ(gate.order, (std::vector<std::string>{
                            "start eager", "end eager", "start tool eager",
                            "end tool eager", "start captured", "end captured",
                            "start tool captured", "end tool captured"}));
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
}

// Past the lanes a context keeps, an idle lane serves a new caller; a
// lane with work, or one streamFor() handed out, is never shared: another
// one is made.
TEST_F(PartitionTest, LanesPastTheCapAreReboundOnlyWhenIdle) {
  Gate gate;
  registerHeld(gate);
  auto part = openUnplanned("refused_kernel");
  ASSERT_TRUE(part && part->confined());
  auto distinct = [](std::vector<cudaStream_t> v) {
    std::sort(v.begin(), v.end());
    return static_cast<std::size_t>(std::unique(v.begin(), v.end()) -
                                    v.begin());
  };
  // A lane handed out by streamFor() is its caller's for good.
  const cudaStream_t mine = newStream();
  const cudaStream_t pinned = part->streamFor(mine);
  std::vector<cudaStream_t> idle;
  for (std::size_t i = 0; i < 2 * green::Pool::kMaxLanes; ++i) {
    const cudaStream_t s = newStream();
    cudaStream_t lane = nullptr;
    ASSERT_TRUE(launchRefused("done at once", s, &lane).valid());
    idle.push_back(lane);
  }
  EXPECT_EQ(distinct(idle), green::Pool::kMaxLanes - 1);
  EXPECT_EQ(std::count(idle.begin(), idle.end(), pinned), 0);
  EXPECT_EQ(part->streamFor(mine), pinned);
  gate.hold = true;
  std::vector<cudaStream_t> busy;
  for (std::size_t i = 0; i < green::Pool::kMaxLanes + 2; ++i) {
    const cudaStream_t s = newStream();
    cudaStream_t lane = nullptr;
    ASSERT_TRUE(launchRefused("held", s, &lane).valid());
    busy.push_back(lane);
  }
  EXPECT_EQ(distinct(busy), busy.size());
  gate.hold = false;
  fake_cuda::pump();
}

// The ids of every context left are held while work queued there may run:
// across two switches, and for a lane that went into a capture after its
// eager work (it cannot be marked until the capture ends).
TEST_F(PartitionTest, EveryContextLeftIsHeldWhileItsLanesWorkRuns) {
  auto plan = std::make_shared<FakePlanner>();
  auto p = openPlanned("refused_kernel", plan, 12);
  ASSERT_TRUE(p && p->confined());
  Gate gate;
  registerHeld(gate);
  gate.hold = true;
  const cudaStream_t user = newStream();
  ASSERT_TRUE(launchRefused("held", user).valid());
  ASSERT_EQ(cudaStreamBeginCapture(user, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  ASSERT_TRUE(launchRefused("captured", user).valid());
  plan->target_sms = 4;
  (void)p->stream();
  plan->target_sms = 8;
  (void)p->stream();
  EXPECT_EQ(p->state().sms, 8u);
  EXPECT_EQ(plan->holds.back().size(), 12u); // the first context's work
  gate.hold = false;
  fake_cuda::pump();
  (void)p->stream();
  EXPECT_EQ(plan->holds.back().size(), 12u) << "the lane is still capturing";
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(user, &graph), cudaSuccess);
  (void)p->stream();
  EXPECT_EQ(plan->holds.back(), fake::groupsIds(2, kGroup));
  (void)cudaGraphDestroy(graph);
}

} // namespace
