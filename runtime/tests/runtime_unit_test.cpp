// Host-side behaviour of libsmpart that needs no GPU: grid sizing, masks,
// error reporting. On a machine without a usable GPU (no driver, or a
// driver and no device) the first call must say so clearly, and no call may
// throw or abort.
#include "smpart/detail/epoch_schedule.hpp"
#include "smpart/detail/notice_pace.hpp"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <random>
#include <string>

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(Plan, PhysicalCtasFillsEverySmOrCutsToTheGrid) {
  using smpart::detail::physicalCtas;
  // All SMs, full occupancy: no more CTAs than logical blocks.
  EXPECT_EQ(physicalCtas(132, 8, 8, true, 100), 100u);
  EXPECT_EQ(physicalCtas(132, 8, 8, true, 1u << 20), 132u * 8);
  // A mask or a lower target: fill every SM, the extra CTAs exit.
  EXPECT_EQ(physicalCtas(132, 8, 8, false, 100), 132u * 8);
  EXPECT_EQ(physicalCtas(132, 8, 2, true, 100), 132u * 8);
  // Occupancy is clamped to the per-SM slot word.
  EXPECT_EQ(physicalCtas(2, 64, 64, true, 1000), 64u);
  EXPECT_EQ(physicalCtas(4, 0, 0, false, 1), 4u);
}

TEST(Plan, OccupancyFromThreads) {
  using smpart::detail::occupancyFromThreads;
  EXPECT_EQ(occupancyFromThreads(256, 2048, 32), 8u);
  EXPECT_EQ(occupancyFromThreads(32, 2048, 32), 32u);
  EXPECT_EQ(occupancyFromThreads(1024, 2048, 32), 2u);
  EXPECT_EQ(occupancyFromThreads(0, 2048, 32), 1u);
}

TEST(Plan, MaskRoundTripsThroughKnobWords) {
  smpart::Knobs k{};
  smpart::SmMask m = smpart::smRange(3, 70);
  m.set(255);
  smpart::detail::storeMask(k, m);
  EXPECT_EQ(smpart::detail::loadMask(k), m);
  EXPECT_EQ(k.sm_mask[0], 0xfffffff8u);
  EXPECT_EQ(k.sm_mask[7], 0x80000000u);
  smpart::detail::initKnobs(k, 40);
  EXPECT_TRUE(smpart::detail::loadMask(k).all());
  EXPECT_EQ(k.ctas_per_sm, smpart::kMaxCtasPerSm);
  EXPECT_EQ(k.preempt, 0u);
}

TEST(Knobs, OneWriteStampsAWholeImage) {
  smpart::Knobs k{};
  smpart::detail::initKnobs(k, 8);
  smpart::KnobImage img{};
  smpart::detail::storeKnobImage(img, k);
  const unsigned before = k.epoch;
  smpart::detail::writeKnobs(k, img, [&](volatile smpart::Knobs &w) {
    w.ctas_per_sm = 3;
    w.preempt = 1;
  });
  EXPECT_EQ(k.epoch, before + 2);
  EXPECT_EQ(k.epoch % 2, 0u);
  smpart::Knobs read{};
  ASSERT_TRUE(smpart::detail::loadKnobImage(img, read));
  EXPECT_EQ(read.epoch, k.epoch);
  EXPECT_EQ(read.ctas_per_sm, 3u);
  EXPECT_EQ(read.preempt, 1u);
  EXPECT_EQ(read.sm_mask[smpart::kMaskWords - 1], 0xffffffffu);
  for (unsigned w = 0; w < smpart::kKnobImageWords; ++w)
    EXPECT_EQ(img.word[w] >> 32, k.epoch) << "word " << w;
}

TEST(Knobs, AReaderRejectsAnImageWrittenHalfWay) {
  smpart::Knobs a{}, b{};
  smpart::detail::initKnobs(a, 8);
  b = a;
  b.epoch = a.epoch + 2;
  b.ctas_per_sm = 1;
  smpart::KnobImage img{};
  smpart::detail::storeKnobImage(img, a);
  // A writer that got as far as the scalars: the mask words are new, the
  // rest old.
  smpart::detail::storeKnobImage(img, b, 0, smpart::kKnobCtasPerSm);
  smpart::Knobs read = a;
  read.ctas_per_sm = 7;
  EXPECT_FALSE(smpart::detail::loadKnobImage(img, read));
  EXPECT_EQ(read.ctas_per_sm, 7u) << "a rejected read leaves the output";
  smpart::detail::storeKnobImage(img, b, smpart::kKnobCtasPerSm);
  ASSERT_TRUE(smpart::detail::loadKnobImage(img, read));
  EXPECT_EQ(read.ctas_per_sm, 1u);
}

// Epochs rise across a slot's launches and wrap (nextKnobEpoch): a write
// past the launch's is unannounced and unapplied until the device
// acknowledges it, also where the epochs are far from 0 or wrapped past it
// (an acked_epoch still 0 once counted as newer than half of them).
TEST(Knobs, EpochsRiseAcrossLaunchesAndWrap) {
  using smpart::detail::nextKnobEpoch;
  EXPECT_EQ(nextKnobEpoch(0), smpart::detail::kLaunchKnobEpoch);
  EXPECT_EQ(nextKnobEpoch(6), 8u);
  EXPECT_EQ(nextKnobEpoch(7), 8u); // a write left half done
  EXPECT_EQ(nextKnobEpoch(0xfffffffeu), smpart::detail::kLaunchKnobEpoch);
  for (std::uint32_t previous : {0u, 0x80000000u, 0xfffffffcu}) {
    SCOPED_TRACE(previous);
    smpart::Knobs k{};
    const std::uint32_t launch = nextKnobEpoch(previous);
    smpart::detail::initKnobs(k, 8, launch);
    smpart::KnobImage img{};
    smpart::Notices n{};
    n.started = 1;
    std::uint32_t announced = 0;
    EXPECT_EQ(smpart::detail::unannouncedEpoch(k, launch, announced), 0u)
        << "the launch's own knobs are not a write";
    smpart::detail::writeKnobs(
        k, img, [](volatile smpart::Knobs &w) { w.ctas_per_sm = 2; });
    EXPECT_NE(k.epoch, 0u);
    EXPECT_EQ(smpart::detail::unannouncedEpoch(k, launch, announced), k.epoch);
    EXPECT_FALSE(smpart::detail::knobsAppliedAt(n, false, k.epoch))
        << "nothing acknowledged yet";
    EXPECT_FALSE(smpart::detail::newlyApplied(k, launch, n, false, announced));
    n.acked_epoch = k.epoch;
    EXPECT_TRUE(smpart::detail::newlyApplied(k, launch, n, false, announced));
    EXPECT_EQ(announced, k.epoch);
  }
}

TEST(Knobs, AcknowledgementPairsTheEpochWithItsDeviceTime) {
  smpart::Notices n{};
  std::uint32_t epoch = 5;
  unsigned long long ns = 7;
  // Nothing acknowledged yet: the outputs are left alone.
  EXPECT_FALSE(
      smpart::detail::readEpochTime(n.acked_epoch, n.acked_ns, epoch, ns));
  EXPECT_EQ(epoch, 5u);
  EXPECT_EQ(ns, 7ull);
  n.acked_ns = 123456789ull;
  n.acked_epoch = 4;
  n.published_ns = 123456000ull;
  n.published_epoch = 6;
  ASSERT_TRUE(
      smpart::detail::readEpochTime(n.acked_epoch, n.acked_ns, epoch, ns));
  EXPECT_EQ(epoch, 4u);
  EXPECT_EQ(ns, 123456789ull);
  ASSERT_TRUE(smpart::detail::readEpochTime(n.published_epoch, n.published_ns,
                                            epoch, ns));
  EXPECT_EQ(epoch, 6u);
  EXPECT_EQ(ns, 123456000ull);
  // Handles with no Notices of their own never report one.
  smpart::KernelHandle none;
  EXPECT_FALSE(none.acknowledgedAt(epoch, ns));
  EXPECT_FALSE(none.publishedAt(epoch, ns));
}

TEST(Layout, HotCountersHaveCacheLinesOfTheirOwn) {
  EXPECT_EQ(offsetof(smpart::State, next_block) % 128, 0u);
  EXPECT_EQ(offsetof(smpart::State, blocks_done) % 128, 0u);
  EXPECT_NE(offsetof(smpart::State, next_block) / 128,
            offsetof(smpart::State, blocks_done) / 128);
  EXPECT_EQ(offsetof(smpart::State, handshake) % 128, 0u)
      << "CTAs spin on the handshake at kernel start";
  EXPECT_EQ(offsetof(smpart::State, knobs), 0u);
  // The first CTA initialises the header; the slot words stay zero.
  EXPECT_EQ(smpart::kStateInitBytes, offsetof(smpart::State, sm_slots));
  // Device knobs (head line + copy line) and three counter lines.
  EXPECT_LE(smpart::kStateInitBytes, 5 * 128u);
}

// The device splits a logical block number into (x, y, z) with a
// multiply-high and a shift; it must equal division for every numerator
// below 2^31 and every extent.
TEST(Plan, BlockDivisorDividesExactlyBelow2To31) {
  std::mt19937 rng(7);
  std::vector<unsigned> divisors;
  for (unsigned d = 1; d <= 2048; ++d)
    divisors.push_back(d);
  for (unsigned i = 0; i < 2000; ++i)
    divisors.push_back(1 + rng() % 0x7fffffffu);
  divisors.push_back(65535);
  divisors.push_back(0x7fffffffu);
  for (unsigned d : divisors) {
    const smpart::BlockDivisor v = smpart::detail::blockDivisor(d);
    for (unsigned n :
         {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 0x7ffffffeu, 0x7fffffffu,
          static_cast<unsigned>(rng() % 0x80000000u)}) {
      if (n >= 0x80000000u)
        continue;
      ASSERT_EQ(smpart::detail::divideBlocks(n, v), n / d)
          << n << " / " << d << " (mul " << v.mul << ", shr " << v.shr << ")";
    }
  }
}

TEST(Plan, SmSetMapsPositionsOntoSparseIds) {
  smpart::DeviceInfo info;
  info.num_sms = 144;
  for (unsigned i = 0; i < 144; ++i)
    info.sm_ids.push_back(i * 264 / 144); // spread over 0..263
  const smpart::SmMask m = smpart::smSet(info, 10, 20);
  EXPECT_EQ(m.count(), 20u);
  for (unsigned i = 10; i < 30; ++i)
    EXPECT_TRUE(m.test(info.sm_ids[i])) << i;
  EXPECT_FALSE(m.test(info.sm_ids[9]));
  EXPECT_EQ(smpart::smSet(info, 140, 10).count(), 4u); // clipped at the end
  smpart::Knobs k{};
  smpart::detail::storeMask(k, smpart::smSet(info, 0, 144));
  EXPECT_EQ(smpart::detail::loadMask(k).count(), 144u);
  EXPECT_NE(k.sm_mask[8], 0u) << "ids above 255 reach the ninth word";
}

// The notice thread polls fast while a knob write awaits its
// acknowledgement, for a bounded time per set of awaited writes, and at
// its idle period otherwise.
TEST(NoticePace, PollsFastOnlyWhileAWriteAwaitsItsAcknowledgement) {
  using smpart::detail::NoticePace;
  NoticePace pace;
  const NoticePace::Clock::time_point t0{};
  EXPECT_EQ(pace.next(t0, 0), NoticePace::kIdle);
  const std::uint64_t one = NoticePace::awaited(7, 4);
  EXPECT_EQ(pace.next(t0, one), NoticePace::kUrgent);
  EXPECT_EQ(pace.next(t0 + NoticePace::kUrgentBudget / 2, one),
            NoticePace::kUrgent);
  // Never acknowledged: back to the idle period once the budget is spent.
  EXPECT_EQ(pace.next(t0 + NoticePace::kUrgentBudget, one), NoticePace::kIdle);
  // A second kernel's write is a new set: fast again, for a new budget.
  const std::uint64_t two = one + NoticePace::awaited(8, 6);
  const auto t1 = t0 + 3 * NoticePace::kUrgentBudget;
  EXPECT_EQ(pace.next(t1, two), NoticePace::kUrgent);
  // The first acknowledged: the set changed again.
  const std::uint64_t rest = NoticePace::awaited(8, 6);
  EXPECT_EQ(pace.next(t1 + NoticePace::kUrgentBudget, rest),
            NoticePace::kUrgent);
  // Nothing awaited.
  EXPECT_EQ(pace.next(t1 + NoticePace::kUrgentBudget, 0), NoticePace::kIdle);
  // A later write of the same kernel is a new term.
  EXPECT_NE(NoticePace::awaited(7, 4), NoticePace::awaited(7, 6));
  EXPECT_NE(NoticePace::awaited(7, 4), NoticePace::awaited(8, 4));
}

TEST(NoticePace, QueriesEventsOncePerIdlePeriodWhilePollingFast) {
  using smpart::detail::NoticePace;
  NoticePace pace;
  const NoticePace::Clock::time_point t0{};
  EXPECT_TRUE(pace.eventsDue(t0));
  int due = 0;
  for (auto t = t0 + NoticePace::kUrgent; t < t0 + 10 * NoticePace::kIdle;
       t += NoticePace::kUrgent)
    due += pace.eventsDue(t);
  EXPECT_EQ(due, 9); // one per idle period, not one per microsecond
}

TEST(EpochSchedule, AStallIsFollowedByOneEpochAPeriodLaterNotABurst) {
  using smpart::detail::nextEpochDue;
  // On time: a period after the one due.
  EXPECT_EQ(nextEpochDue(1000, 1005, 100), 1100);
  // The epoch due at 1000 closed at 1750 (the process was descheduled):
  // the next is a period after that, not at 1100, 1200, ... at once.
  EXPECT_EQ(nextEpochDue(1000, 1750, 100), 1850);
  EXPECT_EQ(nextEpochDue(1000, 1100, 100), 1200); // exactly one period late
}

TEST(Streams, DefaultStreamStaysLegacyInOrdinaryTranslationUnits) {
  EXPECT_EQ(smpart::detail::callerStream(nullptr), nullptr);
}

TEST(Errors, InitNamesTheMissingGpu) {
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  smpart::Status st = smpart::init();
  if (probe == cudaSuccess && count > 0) {
    EXPECT_TRUE(st.ok()) << st.message();
    return;
  }
  // What CUDA answers without a usable GPU depends on the machine: no
  // driver (cudaErrorInsufficientDriver), a driver and no device
  // (cudaErrorNoDevice, or success with 0 devices), devices that exist but
  // may not be used (cudaErrorDevicesUnavailable). The runtime must pass
  // on whichever it got, as kNoDevice; any other answer is not "no GPU".
  const cudaError_t want = probe == cudaSuccess ? cudaErrorNoDevice : probe;
  const cudaError_t no_gpu[] = {cudaErrorInsufficientDriver, cudaErrorNoDevice,
                                cudaErrorDevicesUnavailable};
  EXPECT_NE(std::find(std::begin(no_gpu), std::end(no_gpu), want),
            std::end(no_gpu))
      << "cudaGetDeviceCount answered " << cudaGetErrorName(want);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), smpart::Errc::kNoDevice);
  EXPECT_EQ(st.cudaError(), static_cast<int>(want)) << st.message();
  EXPECT_NE(st.message().find("no usable CUDA GPU"), std::string::npos);
  EXPECT_NE(st.message().find("cudaGetDeviceCount"), std::string::npos);
  if (probe != cudaSuccess) {
    // A failed call: CUDA's error name and the call site, as for any call.
    EXPECT_NE(st.message().find(cudaGetErrorName(probe)), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("runtime.cpp:"), std::string::npos)
        << st.message();
  }
  // The same answer on every later call.
  EXPECT_EQ(smpart::init().message(), st.message());
}

TEST(Errors, LaunchWithoutGpuReportsLikeCudaGetLastError) {
  if (gpuPresent())
    GTEST_SKIP() << "a GPU is present; this test covers the no-GPU path";
  bool called = false;
  smpart::KernelHandle h =
      smpart::launch({"k", nullptr}, dim3(4), dim3(64), 0, nullptr,
                     [&](const smpart::LaunchParams &) { called = true; });
  EXPECT_FALSE(called);
  ASSERT_TRUE(h.valid());
  EXPECT_EQ(h.status().code(), smpart::Errc::kNoDevice);
  EXPECT_EQ(smpart::peekLastError().message(), h.status().message());
  EXPECT_EQ(smpart::getLastError().code(), smpart::Errc::kNoDevice);
  EXPECT_TRUE(smpart::getLastError().ok()); // reset like cudaGetLastError
  // Every call on the failed handle answers with the launch's status.
  EXPECT_EQ(h.preempt().code(), smpart::Errc::kNoDevice);
  EXPECT_EQ(h.setCtasPerSm(2).code(), smpart::Errc::kNoDevice);
  EXPECT_EQ(h.wait().code(), smpart::Errc::kNoDevice);
  smpart::Progress p;
  EXPECT_EQ(h.progress(p).code(), smpart::Errc::kNoDevice);
  EXPECT_FALSE(h.lastBlockTaken());
  EXPECT_EQ(h.doneEvent(), nullptr);
  EXPECT_THROW(h.status().throwIfError(), smpart::Error);
  EXPECT_TRUE(smpart::activeKernels().empty());
}

TEST(Errors, OpaqueLaunchWithoutGpu) {
  if (gpuPresent())
    GTEST_SKIP() << "a GPU is present; this test covers the no-GPU path";
  // The launcher is the program's own launch: smpart's failure must not
  // skip it (CUDA then reports it as it reports any launch here).
  unsigned called = 0;
  smpart::KernelHandle h = smpart::launchOpaque(
      {"refused", nullptr}, dim3(2, 2), dim3(32), 0, nullptr,
      [&](dim3 grid, dim3, std::size_t, cudaStream_t) {
        EXPECT_EQ(grid.x * grid.y, 4u);
        ++called;
      });
  EXPECT_EQ(called, 1u);
  EXPECT_EQ(h.status().code(), smpart::Errc::kNoDevice);
  EXPECT_EQ(smpart::getLastError().code(), smpart::Errc::kNoDevice);
}

TEST(Errors, EmptyGridAndEmptyHandle) {
  smpart::KernelHandle h =
      smpart::launch({"k", nullptr}, dim3(0, 4), dim3(64), 0, nullptr,
                     [](const smpart::LaunchParams &) {});
  EXPECT_EQ(h.status().code(), smpart::Errc::kInvalidArgument);
  EXPECT_NE(h.status().message().find("empty grid"), std::string::npos);
  EXPECT_EQ(smpart::getLastError().code(), smpart::Errc::kInvalidArgument);
  smpart::KernelHandle none;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.preempt().code(), smpart::Errc::kInvalidArgument);
  EXPECT_EQ(none.wait().code(), smpart::Errc::kInvalidArgument);
}

// A rewritten kernel whose __launch_bounds__ the tool widened carries the
// original's limit: a larger block is refused before anything is
// enqueued, as CUDA refuses it for the original kernel.
TEST(Errors, BlockLargerThanTheOriginalLaunchBounds) {
  unsigned called = 0;
  auto closure = [&](const smpart::LaunchParams &) { ++called; };
  smpart::KernelHandle h = smpart::launch({"k", nullptr, false, 256}, dim3(4),
                                          dim3(16, 16, 2), 0, nullptr, closure);
  EXPECT_EQ(h.status().code(), smpart::Errc::kInvalidArgument);
  EXPECT_EQ(h.status().cudaError(), static_cast<int>(cudaErrorInvalidValue));
  EXPECT_NE(h.status().message().find("512 threads per block"),
            std::string::npos)
      << h.status().message();
  EXPECT_NE(h.status().message().find("at most 256"), std::string::npos);
  EXPECT_EQ(called, 0u);
  // At the limit, and without one, the check lets the launch through.
  for (unsigned limit : {256u, 0u}) {
    smpart::KernelHandle at =
        smpart::launch({"k", nullptr, false, limit}, dim3(4), dim3(16, 16), 0,
                       nullptr, [](const smpart::LaunchParams &) {});
    EXPECT_EQ(at.status().message().find("threads per block"),
              std::string::npos)
        << at.status().message();
  }
}

} // namespace
