// Property tests of the persistent-CTA protocol on the hand-rewritten
// kernels in tests/kernels/ (reduce.cu vs reduce.smpart.cu).
#include "emulation_harness.hpp"

#include "smpart/control.hpp"
#include "smpart/detail/plan.hpp"

#include <functional>
#include <numeric>

namespace emu_orig_reduce {
void rowSums(const float *in, float *out, float *total, int width, int height);
void smooth3d(const float *in, float *out, int nx, int ny, int nz);
} // namespace emu_orig_reduce
namespace emu_xf_reduce {
void rowSums(smpart::LaunchControl, const float *in, float *out, float *total,
             int width, int height);
void smooth3d(smpart::LaunchControl, const float *in, float *out, int nx,
              int ny, int nz);
} // namespace emu_xf_reduce

namespace {

using smpart::emu::KernelCase;

struct RowSums {
  static constexpr int kWidth = 200, kHeight = 5;
  std::vector<float> in, out;
  float total = 0;
  KernelCase make() {
    KernelCase k{"rowSums", dim3((kWidth + 63) / 64, kHeight), dim3(64)};
    k.reset = [this] {
      in.resize(kWidth * kHeight);
      for (std::size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<float>(i % 17); // integers: sums are exact
      out.assign(k_tiles(), -1.f);
      total = 0;
    };
    k.original = [this] {
      emu_orig_reduce::rowSums(in.data(), out.data(), &total, kWidth, kHeight);
    };
    k.transformed = [this](const smpart::LaunchControl &c) {
      emu_xf_reduce::rowSums(c, in.data(), out.data(), &total, kWidth, kHeight);
    };
    k.outputs = [this] {
      auto v = smpart::emu::asDoubles(out);
      v.push_back(total);
      return v;
    };
    return k;
  }
  static std::size_t k_tiles() { return ((kWidth + 63) / 64) * kHeight; }
};

struct Smooth3d {
  static constexpr int kNy = 3, kNz = 2;
  int nx = 40; ///< a test may make the grid longer
  std::vector<float> in, out;
  KernelCase make() {
    KernelCase k{"smooth3d", dim3((nx + 31) / 32, kNy, kNz), dim3(32)};
    k.reset = [this] {
      in.resize(nx * kNy * kNz);
      std::iota(in.begin(), in.end(), 1.f);
      out.assign(in.size(), 0.f);
    };
    k.original = [this] {
      emu_orig_reduce::smooth3d(in.data(), out.data(), nx, kNy, kNz);
    };
    k.transformed = [this](const smpart::LaunchControl &c) {
      emu_xf_reduce::smooth3d(c, in.data(), out.data(), nx, kNy, kNz);
    };
    k.outputs = [this] { return smpart::emu::asDoubles(out); };
    return k;
  }
};

const unsigned kSchedules = smpart::emu::schedulesFromEnv(1000);

TEST(EmulationProperty, RowSums2dSharedBarriersEarlyReturnAtomics) {
  RowSums r;
  EXPECT_EQ(smpart::emu::runProperty(r.make(), kSchedules), kSchedules);
}

TEST(EmulationProperty, Smooth3dWarpShuffle) {
  Smooth3d s;
  EXPECT_EQ(smpart::emu::runProperty(s.make(), kSchedules), kSchedules);
}

// The schedules really exercise the knobs.
TEST(EmulationProperty, SchedulesPreemptResizeAndTag) {
  RowSums r;
  KernelCase k = r.make();
  smpart::emu::Report sum;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    k.reset();
    smpart::emu::Report one = smpart::emu::runTransformed(
        k.grid, k.block, k.transformed, smpart::emu::configFor(seed));
    ASSERT_TRUE(one.ok) << one.error;
    sum.preemptions += one.preemptions;
    sum.resumes += one.resumes;
    sum.grows += one.grows;
    sum.mask_changes += one.mask_changes;
    sum.tagged_loads += one.tagged_loads;
    sum.loads += one.loads;
    sum.chunks += one.chunks;
    sum.steps += one.steps;
    sum.bypass_checks += one.bypass_checks;
  }
  EXPECT_GT(sum.preemptions, 20u);
  EXPECT_GT(sum.resumes, 20u);
  EXPECT_GT(sum.grows, 20u);
  EXPECT_GT(sum.mask_changes, 20u);
  EXPECT_GT(sum.tagged_loads, 0u);
  EXPECT_LT(sum.tagged_loads, sum.loads);
  // Chunks of several blocks happen (K adapts), and fewer chunks than
  // blocks were taken overall.
  EXPECT_GT(sum.chunks, 100u);
  // SMs settle often enough for the tag count to be checked.
  EXPECT_GT(sum.bypass_checks, 100u);
}

// Without chaos every logical block still runs once, on any machine shape.
TEST(EmulationProperty, CalmSchedules) {
  Smooth3d s;
  KernelCase k = s.make();
  for (unsigned sms = 1; sms <= 3; ++sms) {
    smpart::emu::Config cfg;
    cfg.chaos = false;
    cfg.num_sms = sms;
    k.reset();
    smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.preemptions, 0u);
  }
}

// Sparse SM ids over several mask words and up to 32 CTAs per SM.
TEST(EmulationProperty, SparseSmIdsAndManyCtasPerSm) {
  Smooth3d s;
  KernelCase k = s.make();
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    smpart::emu::Config cfg = smpart::emu::configFor(seed);
    cfg.num_sms = 5 + seed % 4;
    cfg.sparse_ids = true;
    cfg.id_stride = 37 + static_cast<unsigned>(seed % 29); // up to ~500
    cfg.id_offset = static_cast<unsigned>(seed % 7);
    cfg.occupancy = seed % 2 ? 32 : 1 + static_cast<unsigned>(seed % 9);
    k.reset();
    smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    ASSERT_TRUE(r.ok) << r.error;
  } // 144 SMs with ids spread over 0..263, as on a large GPU.
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    smpart::emu::Config cfg = smpart::emu::configFor(seed);
    cfg.num_sms = 144;
    cfg.id_span = 264;
    cfg.occupancy = 1 + static_cast<unsigned>(seed % 2);
    k.reset();
    smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    ASSERT_TRUE(r.ok) << r.error;
  }
}

/// A host knob write: only SM `sm`, one block per chunk.
std::function<void(volatile smpart::Knobs &)> onlySm(unsigned sm) {
  return [sm](volatile smpart::Knobs &kn) {
    smpart::SmMask m;
    m.set(sm);
    smpart::detail::storeMask(kn, m);
    kn.chunk_target_ns = 0;
  };
}

/// Smooth3d (`nx` wide) on two SMs, one CTA each, under `script` and no
/// chaos.
smpart::emu::Report runOnTwoSms(
    std::vector<std::pair<unsigned long long,
                          std::function<void(volatile smpart::Knobs &)>>>
        script,
    unsigned timer_resolution_ns = 0, int nx = 40) {
  Smooth3d s;
  s.nx = nx;
  KernelCase k = s.make();
  smpart::emu::Config cfg;
  cfg.chaos = false;
  cfg.num_sms = 2;
  cfg.occupancy = 1;
  cfg.timer_resolution_ns = timer_resolution_ns;
  cfg.script = std::move(script);
  k.reset();
  return smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
}

// A mask that strands every CTA able to work: the CTA on SM 0 works alone,
// then the mask moves to SM 1, where none runs. The last CTA becomes the
// anchor on SM 0 and, after the grace period, finishes the grid outside
// its allocation and reports the stall; nothing is relaunched.
TEST(EmulationProperty, StrandedAllocationFinishesWithAReportedStall) {
  const smpart::emu::Report r = runOnTwoSms({{1, onlySm(0)}, {50, onlySm(1)}});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GT(r.stalls, 0u) << "steps " << r.steps << " chunks " << r.chunks
                          << " ctas " << r.ctas;
  EXPECT_GT(r.outside_blocks, 0u);
}

// The same stranding, undone within the stall grace period (20 us): the
// anchor waits and reports no stall, also where %globaltimer ticks more
// slowly than the anchor looks at it, so two looks read the same time (a
// GPU's timer steps about every microsecond, about one park iteration
// there; the emulator's iterations take 5 us, hence a 10 us step here).
TEST(EmulationProperty, StrandingShorterThanTheGraceIsNoStall) {
  for (unsigned resolution : {0u, 10000u}) {
    const smpart::emu::Report r = runOnTwoSms(
        {{1, onlySm(0)}, {50, onlySm(1)}, {140, onlySm(0)}}, // 18 us
        resolution);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.stalls, 0u) << "timer step " << resolution << " ns";
    EXPECT_EQ(r.outside_blocks, 0u) << "timer step " << resolution << " ns";
  }
}

/// A host knob write: preempt (or resume).
std::function<void(volatile smpart::Knobs &)> preempted(bool On) {
  return [On](volatile smpart::Knobs &kn) { kn.preempt = On ? 1u : 0u; };
}

// A stall ends with what caused it. Stranded until the anchor ran outside
// its allocation, then preempted and resumed still stranded: the anchor
// waits the grace period again (the resume's CTAs may be on their way,
// and the SM it ran on may have gone to another kernel meanwhile) and
// reports a second stall. (It kept the first stall's flag across the
// preemption and ran outside at once on resuming, the first stall's
// report standing for both.)
TEST(EmulationProperty, EachStallWaitsItsOwnGraceAndIsReported) {
  const smpart::emu::Report r = runOnTwoSms({{1, onlySm(0)},
                                             {50, onlySm(1)},
                                             {250, preempted(true)},
                                             {450, preempted(false)}},
                                            0, 32 * 40);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.stalls, 2u) << "outside blocks " << r.outside_blocks;
}

// Preempted and never resumed: the kernel cannot finish (the run fails as
// a stall), only the anchor is left, and nothing was taken after the CTAs
// saw the preemption. Also where the GPU serves the protocol's fast copy
// of the host knobs (cp.async, a weak read) from a cached line of host
// memory, stale for ever: the system-scope read of the image's epoch
// beside it still sees the preemption.
TEST(EmulationProperty, PreemptedKernelKeepsOnlyTheAnchor) {
  for (bool cached : {false, true}) {
    SCOPED_TRACE(cached ? "stale fast knob reads" : "fresh knob reads");
    Smooth3d s;
    KernelCase k = s.make();
    smpart::emu::Config cfg;
    cfg.chaos = false;
    cfg.settle = false;
    cfg.cached_host_reads = cached;
    cfg.num_sms = 3;
    cfg.occupancy = 2;
    cfg.script = {{30, [](volatile smpart::Knobs &kn) { kn.preempt = 1; }}};
    k.reset();
    smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("stall"), std::string::npos) << r.error;
    EXPECT_EQ(r.resident_at_end, 1u) << "only the anchor stays";
    EXPECT_LT(r.taken_at_end,
              static_cast<unsigned long long>(k.grid.x) * k.grid.y * k.grid.z);
    if (cached) { // (fresh reads too, where a host write lands mid-copy)
      EXPECT_GT(r.strong_fetches, 0u);
    }
  }
}

// Knob epochs rise across the launches a slot serves (a GPU may keep a
// line of the host's knob image cached from an earlier launch, whose stamps
// must not match this launch's epoch) and wrap: a launch whose epoch is
// past half the 32-bit range, and one whose knob writes wrap through 0,
// still publish exactly what each write wrote and take every block once.
// (The handshake's device epoch started at 0, which the signed comparison
// of epochs counts newer than half of them: no copy was ever published and
// the launch stalled.)
TEST(EmulationProperty, KnobEpochsFarFromZeroAndWrapping) {
  RowSums rs;
  KernelCase k = rs.make();
  k.reset();
  const smpart::emu::Report orig =
      smpart::emu::runOriginal(k.grid, k.block, k.original, k.dynamic_smem);
  ASSERT_TRUE(orig.ok) << orig.error;
  const std::vector<double> want = k.outputs();
  for (std::uint32_t previous : {0x80000000u, 0xfffffff0u}) {
    unsigned long long writes = 0;
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      SCOPED_TRACE("previous epoch " + std::to_string(previous) + ", seed " +
                   std::to_string(seed));
      smpart::emu::Config cfg = smpart::emu::configFor(seed);
      cfg.previous_knob_epoch = previous;
      k.reset();
      const smpart::emu::Report r =
          smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(smpart::emu::compareOutputs(want, k.outputs(), k.tolerance),
                "");
      writes += r.mask_changes + r.preemptions;
    }
    EXPECT_GT(writes, 20u) << "the knobs were written past the launch's";
  }
}

// A launch's CTAs claim their SM slots at once, 16 per SM here, the
// scheduler switching CTAs between any two protocol steps. Each takes the
// slot its ticket names: no claim finds its slot taken. (Racing on the
// slot word with compare-and-swap, most claims failed at least once, and
// on a GPU the last of 16 waited for 16 rounds of L2 round trips.)
TEST(EmulationProperty, CtasArrivingTogetherClaimSlotsWithoutRetries) {
  Smooth3d s;
  s.nx = 32 * 400; // 2400 blocks: every CTA claims before any leaves
  KernelCase k = s.make();
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    smpart::emu::Config cfg = smpart::emu::configFor(seed);
    cfg.chaos = false;
    cfg.num_sms = 4;
    cfg.occupancy = 16;
    k.reset();
    const smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.ctas, 64u);
    EXPECT_EQ(r.claim_retries, 0u) << "seed " << seed;
  }
}

// At the end of the grid every CTA's claim on the block counter fails once,
// all CTAs of a launch at about the same time, on one L2 line: a CTA that
// saw the grid taken does not claim again (settle() after decide() did, a
// second atomic per CTA in the launch's last microseconds).
TEST(EmulationProperty, EachCtaClaimsPastTheGridAtMostOnce) {
  Smooth3d s;
  s.nx = 32 * 40;
  KernelCase k = s.make();
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    smpart::emu::Config cfg = smpart::emu::configFor(seed);
    cfg.num_sms = 4;
    cfg.occupancy = 4;
    k.reset();
    const smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.error;
    EXPECT_GT(r.exhausted_claims, 0u) << "seed " << seed;
    EXPECT_LE(r.exhausted_claims, r.ctas) << "seed " << seed;
  }
}

/// Three SMs with %smid 0, 100 and 200 (7 mask words), two CTAs each, a
/// scripted controller only, 20-ns steps (a scan step of a few tens of
/// yields in under 1 us) and a 2-us host read: the acknowledgement tests.
smpart::emu::Config sparseAckConfig() {
  smpart::emu::Config cfg;
  cfg.chaos = false;
  cfg.settle = false;
  cfg.num_sms = 3;
  cfg.occupancy = 2;
  cfg.sparse_ids = true;
  cfg.id_stride = 100;
  cfg.step_ns = 20;
  cfg.host_read_ns = 2000;
  return cfg;
}

// A preemption is acknowledged at the first poll after the last CTA gave
// its slot back: it forbids every slot, so the count of held slots says
// so, with no scan of the mask words (with %smid 0, 100 and 200, 7 words,
// one per poll, which took about 4 us here). The kernel runs on SM 0 only
// until the preemption; the parked anchor drives the acknowledgement,
// polling at every look, and reads the host's image (a PCIe round trip,
// 2 us here) at most once per poll interval.
TEST(EmulationProperty, AcknowledgesAPreemptionSoonAfterTheLastSlotIsGone) {
  Smooth3d s;
  s.nx = 32 * 200; // 1200 blocks, one per chunk: still running at step 400
  KernelCase k = s.make();
  smpart::emu::Config cfg = sparseAckConfig();
  cfg.script = {{1,
                 [](volatile smpart::Knobs &kn) {
                   for (auto &w : kn.sm_mask)
                     w = 0;
                   kn.sm_mask[0] = 1u; // SM 0 only
                   kn.chunk_target_ns = 0;
                 }},
                {400, [](volatile smpart::Knobs &kn) { kn.preempt = 1; }}};
  k.reset();
  const smpart::emu::Report r =
      smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
  EXPECT_NE(r.error.find("stall"), std::string::npos) << r.error;
  EXPECT_EQ(r.resident_at_end, 1u) << "only the anchor stays";
  ASSERT_TRUE(r.acked_last_write) << "the preemption was never acknowledged";
  EXPECT_GT(r.ack_after_clean_ns, 0u) << "no clean moment was seen";
  // At most one host read (2 us) may come before the acknowledging scan
  // step in its poll; the 7-word scan took 4.2 us.
  EXPECT_LT(r.ack_after_clean_ns, cfg.host_read_ns + 1000);
}

// A mask change is acknowledged soon after the last CTA on a removed SM
// left, while the kernel goes on on the SM it keeps (no parked anchor
// drives the scan). The scan covers 7 mask words (%smid 0, 100 and 200),
// one per poll; while the epoch waits for its acknowledgement the next poll
// is due at once, so the words follow each other as fast as the two CTAs
// on SM 0 decide, held up only by the host reads (2 us here, one per poll
// interval), where one word per 4-us poll interval took 19-25 us.
TEST(EmulationProperty, AcknowledgesAMaskChangeSoonAfterTheLastSlotIsGone) {
  Smooth3d s;
  s.nx = 32 * 400; // still running on SM 0 long after the change
  KernelCase k = s.make();
  smpart::emu::Config cfg = sparseAckConfig();
  cfg.script = {{1, [](volatile smpart::Knobs &kn) { kn.chunk_target_ns = 0; }},
                {400, [](volatile smpart::Knobs &kn) {
                   for (auto &w : kn.sm_mask)
                     w = 0;
                   kn.sm_mask[0] = 1u; // SM 0 only
                 }}};
  for (unsigned seed = 1; seed <= 8; ++seed) {
    cfg.seed = seed;
    k.reset();
    const smpart::emu::Report r =
        smpart::emu::runTransformed(k.grid, k.block, k.transformed, cfg);
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.error;
    ASSERT_TRUE(r.acked_last_write)
        << "seed " << seed << ": never acknowledged";
    EXPECT_GT(r.ack_after_clean_ns, 0u) << "seed " << seed;
    EXPECT_LT(r.ack_after_clean_ns, 3 * smpart::kPollIntervalNs)
        << "seed " << seed;
  }
}

// The checker is not vacuous: a "rewritten" kernel that ignores the
// protocol (runs the original body with physical indices) is caught.
TEST(EmulationProperty, CatchesAKernelThatIgnoresTheProtocol) {
  RowSums r;
  KernelCase k = r.make();
  k.transformed = [&r](const smpart::LaunchControl &) {
    emu_orig_reduce::rowSums(r.in.data(), r.out.data(), &r.total,
                             RowSums::kWidth, RowSums::kHeight);
  };
  k.reset();
  smpart::emu::Report rep = smpart::emu::runTransformed(
      k.grid, k.block, k.transformed, smpart::emu::configFor(7));
  EXPECT_FALSE(rep.ok);
  EXPECT_NE(rep.error.find("SMPART_EMU_SEED=7"), std::string::npos)
      << rep.error;
}

} // namespace
