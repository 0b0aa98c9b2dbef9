// CPU emulation of transformed kernels: test support, not a product
// feature. Runs a kernel's threads as fibers on the calling thread, CTAs on
// virtual SMs, and (for transformed kernels) a seeded scheduler that
// interleaves CTAs at logical-block boundaries while it preempts, resumes,
// grows, and changes SM masks, CTAs per SM and bypass counts at random.
// It checks the runtime contract as it goes (see Report).
#pragma once

#include "smpart/control.hpp"
#include "smpart/kernel_control.hpp"

#include <cuda_runtime.h> // dim3

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace smpart {
namespace emu {

/// A kernel invocation for one thread: calls the kernel with its arguments.
using OriginalBody = std::function<void()>;
using TransformedBody = std::function<void(const LaunchControl &)>;

struct Config {
  std::uint64_t seed = 1;
  unsigned num_sms = 4;   ///< virtual SMs
  unsigned occupancy = 3; ///< CTAs of the kernel that fit on one SM (<= 32)
  /// %smid of SM i is i * id_stride + id_offset (sparse, over several mask
  /// words) instead of i.
  bool sparse_ids = false;
  unsigned id_stride = 1, id_offset = 0;
  /// Nonzero: the %smid values are num_sms distinct ids drawn (from the
  /// seed) in [0, id_span), e.g. 144 SMs over 0..263.
  unsigned id_span = 0;
  /// Host knob writes at given scheduler steps (besides chaos), e.g. a
  /// mask change that strands the anchor.
  std::vector<
      std::pair<unsigned long long, std::function<void(volatile Knobs &)>>>
      script;
  /// Before the end the controller completes its last write and clears
  /// preemption; false: a preempted kernel stays preempted (and must then
  /// fail as a stall, with only the anchor left).
  bool settle = true;
  bool chaos = true;       ///< turn knobs / preempt / grow at random
  double knob_rate = 0.15; ///< chance of a knob action per step
  std::size_t dynamic_smem = 0;
  /// The protocol's fast copy of the host knobs (a weak read, cp.async on a
  /// GPU) returns the image as it first read it, for ever, as on a GPU
  /// that keeps a line of system memory in a cache: only its system-scope
  /// reads see host writes.
  bool cached_host_reads = false;
  /// %globaltimer's step in ns (0: every emulated nanosecond). About 1000
  /// on many GPUs: two reads a few hundred ns apart often agree.
  unsigned timer_resolution_ns = 0;
  /// Emulated time per scheduler step. Every yield of a CTA is a step, and
  /// one CTA of several runs per step, so a poll (tens of yields) spans
  /// microseconds at 200: smaller steps bring its span nearer a GPU's.
  unsigned step_ns = 200;
  /// Emulated time a weak read of the host's knob image adds (a PCIe round
  /// trip on a GPU, 2-5 us); 0 keeps every poll a few steps long.
  unsigned host_read_ns = 0;
  /// The knob epoch the slot's previous launch left in the host's knobs
  /// (0: a fresh slot): the launch's own follows it, as libsmpart's does
  /// (nextKnobEpoch). Epochs rise across a slot's launches and wrap.
  std::uint32_t previous_knob_epoch = 0;
};

struct Report {
  bool ok = true;
  std::string error;            ///< first violated property, with the seed
  unsigned resident_at_end = 0; ///< CTAs still resident when the run ended
  unsigned long long taken_at_end = 0; ///< State::next_block at the end
  unsigned long long steps = 0, preemptions = 0, resumes = 0, grows = 0,
                     mask_changes = 0, ctas = 0, tagged_loads = 0, loads = 0,
                     chunks = 0, stalls = 0, outside_blocks = 0,
                     bypass_checks = 0; ///< settled-SM tag counts checked
  /// Atomics of slot claims that found their slot taken and tried again:
  /// contention among CTAs of one SM claiming at once.
  unsigned long long claim_retries = 0;
  /// Atomics on the block counter that found the grid already taken: at
  /// most one per CTA (the CTA remembers it; the counter never goes back).
  unsigned long long exhausted_claims = 0;
  unsigned strong_fetches = 0; ///< Notices::strong_fetches at the end
  /// Of the last acknowledgement (Notices::acked_epoch moving): emulated
  /// time from the first step at which no CTA held a slot its epoch forbids
  /// to the acknowledgement, the scan's own latency.
  unsigned long long ack_after_clean_ns = 0;
  /// The host's last knob write was acknowledged by the end.
  bool acked_last_write = false;
};

/// Runs the original kernel: each CTA of `grid` in order, its threads as
/// fibers with a real barrier.
Report runOriginal(dim3 grid, dim3 block, const OriginalBody &body,
                   std::size_t dynamic_smem = 0);

/// Runs a transformed kernel over the logical grid `grid` under the seeded
/// scheduler, which interleaves CTAs inside the protocol and turns knobs
/// (as stamped host images, sometimes leaving a write half done)
/// between any two steps, then stops and lets the kernel finish on the CTAs
/// it has: nothing is relaunched for it, so a kernel that cannot finish by
/// itself fails as a stall. Each device knob epoch must publish exactly
/// what the host wrote under it. Checks on every decision, against the
/// device knobs published under the epoch the CTA decided under: every
/// logical block runs exactly once; a CTA takes blocks only on an SM in the
/// mask, in a slot below the CTAs-per-SM target, held by no other CTA,
/// never under preemption; its bypass tag follows its slot; blocks run
/// outside the allocation only by the anchor, holding no slot, after it saw
/// no CTA holding one, with a stall reported; a settled SM has dense slots
/// and min(bypass, CTAs) tagged. At the end: every block counted done, no
/// slot held, resident_ctas and first_live zero, the anchor reported
/// completion and the early notification fired.
Report runTransformed(dim3 grid, dim3 block, const TransformedBody &body,
                      const Config &config);

// ---------------------------------------------------------------------------
// Co-running kernels on one emulated GPU.
//
// Several transformed kernels share the virtual SMs (one set of %smid
// values); each has its own knobs, state and notices, as separate launches
// of libsmpart have. One seeded scheduler picks, at every step, one resident
// CTA of any kernel and runs it to its next yield point. Nothing turns knobs
// at random: each kernel is exposed as a smpart::KernelControl
// (EmulatedKernel) whose calls write the emulated host knobs exactly as
// smpart::KernelHandle writes the real ones (kernel_handle.cpp), and a
// CoObserver hears of launches, last-block notifications and completions
// as a LaunchObserver does (notices.cpp) - typically a smpart::Controller.

/// One co-running launch.
struct CoKernel {
  std::string name; ///< KernelControl::name(), as profiles name it
  dim3 grid, block;
  TransformedBody body;
  unsigned occupancy = 2; ///< CTAs of this kernel that fit on one SM
  std::size_t dynamic_smem = 0;
  /// Scheduler step at which it is launched (0: before the first step).
  unsigned long long arrive_at_step = 0;
};

/// A running emulated kernel as the controller sees it. Knob calls write
/// the emulated host knobs as one stamped image, as KernelHandle does:
/// setSmMask (an empty mask is refused), setCtasPerSm (1..32),
/// setBypassCtasPerSm (<= 32), preempt (preempt = 1), resume (preempt = 0,
/// then grow), grow (refused while preempted; nothing once the last block
/// was taken; else launches physicalCtas(SMs, occupancy, ctas_per_sm,
/// every mask bit set, total) CTAs, as Kernel::ctasToLaunch does).
/// progress() reads the notices as the controller's adapter of
/// KernelHandle::progress does (runtime_glue.cpp: executed blocks read from
/// the blocks taken while CTAs run), and knobsApplied() the
/// acknowledgement as KernelHandle::knobsApplied does.
class EmulatedKernel : public KernelControl {
public:
  explicit EmulatedKernel(std::shared_ptr<void> machine);
  unsigned long long id() const override;
  std::string name() const override;
  unsigned occupancy() const override;
  Status setSmMask(const SmMask &Mask) override;
  Status setCtasPerSm(unsigned N) override;
  Status setBypassCtasPerSm(unsigned N) override;
  Status preempt() override;
  Status setKnobs(const KnobSet &set) override;
  Status resume() override;
  Status grow() override;
  Status progress(ControlProgress &Out) const override;
  bool knobsApplied() const override;

  /// Test views: the host knobs, the knobs the device last published.
  Knobs hostKnobs() const;
  Knobs deviceKnobs() const; ///< the device copy as last published
  /// Position of the kernel in the runCoRun() list.
  unsigned index() const;

private:
  std::shared_ptr<void> M;
};

class CoObserver {
public:
  virtual ~CoObserver() = default;
  /// At the launch, before its CTAs are enqueued (knobs written now apply
  /// to its first CTAs, as with libsmpart's launch observer).
  virtual void onLaunch(const std::shared_ptr<EmulatedKernel> &Kernel) = 0;
  virtual void onLastBlockTaken(unsigned long long Id) = 0;
  /// knobsApplied() became true for a newer host epoch (libsmpart's
  /// notice thread: LaunchObserver::onKnobsApplied).
  virtual void onKnobsApplied(unsigned long long) {}
  virtual void onDone(unsigned long long Id) = 0;
  /// Before every scheduler step (e.g. to drive a trace clock).
  virtual void onStep(unsigned long long) {}
};

struct CoConfig {
  std::uint64_t seed = 1;
  unsigned num_sms = 8;
  /// Nonzero: num_sms distinct %smid values drawn in [0, id_span).
  unsigned id_span = 0;
  /// Spatial partitioning is expected: see CoReport::overlap_takes.
  bool exclusive_sms = false;
  CoObserver *observer = nullptr;
  unsigned long long step_limit = 3000000;
};

/// A block take by one CTA: the step, its SM id, the device knob epoch it
/// decided under and the chunk size.
struct CoTake {
  unsigned long long step;
  unsigned sm, epoch, count;
};
/// A knob epoch the kernel's device published, and the step it was seen.
struct CoPublish {
  unsigned long long step;
  unsigned epoch;
  SmMask mask;
  bool preempt;
  unsigned ctas_per_sm;
};

struct CoKernelReport {
  std::string name;
  unsigned long long id = 0;
  Report report; ///< the single-kernel checks of this launch
  unsigned long long arrived_step = 0, last_block_step = 0, done_step = 0;
  std::vector<CoTake> takes;
  std::vector<CoPublish> published;
  /// Host knob writes (complete epochs) with the step they were made at.
  std::vector<std::pair<unsigned long long, Knobs>> host_writes;
};

struct CoReport {
  bool ok = true;
  std::string error; ///< first violated property, with the seed
  unsigned long long steps = 0;
  std::vector<unsigned> sm_ids;
  /// Takes on an SM that the current device knobs of another kernel with
  /// blocks left also allow. Checked at every take inside an allocation,
  /// by either kernel, so a CTA acting on a stale copy is caught as well as
  /// a grant that came too early. A kernel whose launch handshake has not
  /// published its first copy yet takes nothing and allows nothing: that
  /// copy will be the host's newest knobs. With exclusive_sms any such take
  /// fails the run. The anchor's takes outside its allocation (a reported
  /// stall) are exempt and counted in Report::outside_blocks.
  unsigned long long overlap_takes = 0;
  /// Takes on an SM where a CTA of another kernel was working on a chunk.
  unsigned long long shared_sm_takes = 0;
  /// exclusive_sms: scheduler steps at which the host masks of kernels
  /// that may still take blocks (not preempted on the host, blocks left)
  /// were checked pairwise disjoint (any overlap fails the run).
  unsigned long long host_disjoint_checks = 0;
  std::vector<CoKernelReport> kernels;
};

/// Runs `kernels` concurrently on one emulated GPU under a seeded
/// interleaving; each launches at its arrive_at_step. Every per-kernel
/// check of runTransformed() applies to each launch (exactly-once blocks,
/// takes only under published knobs, slots, tags, final counters); plus
/// the co-run checks above. Ends when every kernel completed.
CoReport runCoRun(const std::vector<CoKernel> &kernels, const CoConfig &config);

} // namespace emu
} // namespace smpart
