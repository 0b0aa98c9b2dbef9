// Streams, hardware queues, lazy loading and relaunches under libsmpart's
// own relaunch, announce and preload rules (../README.md). A deadlock, a
// relaunch behind another kernel, or a controller planning for a kernel its
// stream has not reached fails.
#include "../queue_model.hpp"

#include "smpart/detail/relaunch.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

using smpart::queue::Config;
using smpart::queue::KernelSpec;

namespace {

void expectOk(const smpart::queue::Result &r, const std::string &what) {
  EXPECT_TRUE(r.ok) << what << ": " << r.failure;
}

} // namespace

// Preempt A, launch B (not loaded yet under lazy loading), resume A when B
// is done: the controller's normal pattern.
TEST(QueueModel, PreemptLaunchResumeUnderLazyLoading) {
  Config c;
  c.registered = {"a", "b"};
  std::vector<KernelSpec> l = {{"a", 0, 400}, {"b", 1, 64}};
  expectOk(smpart::queue::run(c, l), "lazy");
  c.lazy = false; // CUDA_MODULE_LOADING=EAGER
  expectOk(smpart::queue::run(c, l), "eager");
}

// Launches queued ahead behind user work on a few streams: relaunches
// never wait behind another kernel, and the controller plans only for
// kernels that can run.
TEST(QueueModel, LaunchesAheadWithRelaunches) {
  Config c;
  c.registered = {"a", "b", "c"};
  std::vector<KernelSpec> l;
  for (unsigned i = 0; i < 12; ++i)
    l.push_back({std::string(1, "abc"[i % 3]), i % 3, 200 + 37 * i, false,
                 i < 3 ? 50u : 0u});
  expectOk(smpart::queue::run(c, l), "ahead");
}

// Graph replays (not announced, never relaunched) beside launched kernels,
// with user work between them.
TEST(QueueModel, GraphReplaysBesideLaunches) {
  Config c;
  c.registered = {"a", "g"};
  std::vector<KernelSpec> l = {{"a", 0, 300},       {"g", 1, 100, true},
                               {"g", 1, 100, true}, {"a", 2, 200, false, 40},
                               {"g", 1, 100, true}, {"a", 0, 150}};
  expectOk(smpart::queue::run(c, l), "graphs");
}

// Two grows at once (a controller's and the user's): the first one's
// stream still looks idle (its idle event is recorded only after the
// relaunch is enqueued, outside the runtime's lock), yet the second gets
// another stream, or it would queue behind the first's persistent CTAs.
TEST(RelaunchStreamPool, AStreamStaysLentUntilReturned) {
  smpart::detail::RelaunchStreamPool pool(4);
  auto idle = [](std::size_t) { return false; }; // every event complete
  EXPECT_EQ(pool.acquire(1, idle), 0u);          // a new stream
  pool.added(1);
  EXPECT_EQ(pool.acquire(2, idle), 1u) << "stream 0 is lent to kernel 1";
  pool.added(2);
  pool.returned(0);
  EXPECT_EQ(pool.acquire(3, idle), 0u);
  EXPECT_EQ(pool.owner(0), 3u);
  auto busy = [](std::size_t) { return true; }; // relaunches in flight
  pool.returned(0);
  pool.returned(1);
  EXPECT_EQ(pool.acquire(4, busy), 2u);
  pool.added(4);
  EXPECT_EQ(pool.acquire(5, busy), 3u);
  pool.added(5);
  EXPECT_EQ(pool.acquire(6, busy), smpart::detail::RelaunchStreamPool::kNone);
  pool.clear();
  pool.returned(3); // forgotten since: ignored
  EXPECT_EQ(pool.size(), 0u);
}

// Seeded schedules: streams, connections (including one), block counts,
// user work, replays, registered or not.
TEST(QueueModel, SeededSchedules) {
  const char *env = std::getenv("SMPART_QUEUE_SCHEDULES");
  const unsigned n = env ? static_cast<unsigned>(std::atoi(env)) : 300;
  for (unsigned seed = 1; seed <= n; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](unsigned lo, unsigned hi) {
      return std::uniform_int_distribution<unsigned>(lo, hi)(rng);
    };
    Config c;
    pick(0, 3); // (one connection: see README, "Left open")
    c.connections = 8;
    c.sms = pick(2, 6);
    c.occupancy = pick(1, 3);
    const unsigned fns = pick(2, 4), streams = pick(1, 4);
    for (unsigned f = 0; f < fns; ++f)
      c.registered.push_back("k" + std::to_string(f));
    std::vector<KernelSpec> l;
    for (unsigned i = 0, count = pick(2, 14); i < count; ++i)
      l.push_back({"k" + std::to_string(pick(0, fns - 1)), pick(0, streams - 1),
                   pick(8, 400), pick(0, 7) == 0,
                   pick(0, 3) == 0 ? pick(1, 60) : 0u});
    const smpart::queue::Result r = smpart::queue::run(c, l);
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.failure;
  }
}
