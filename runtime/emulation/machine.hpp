// The emulated GPU's state, shared by the parts of the emulator (internal;
// tests use emulator.hpp): a thread as a fiber, a CTA, one launch (Machine)
// and a co-run, and the functions each part offers the others.
//
//   fibers.cpp     fibers, fiber switch, stack pool, running a CTA,
//                  barriers and warp collectives
//   scheduler.cpp  the launch set-up, the hardware block scheduler and one
//                  scheduler step of a CTA, shared by single runs and co-runs
//   chaos.cpp      host knob writes, and the random controller of single runs
//   invariants.cpp the protocol checks (decided(), published knobs, final
//                  counters, co-run disjointness) and the hooks feeding them
//   corun.cpp      runCoRun() and EmulatedKernel
//   emulator.cpp   runOriginal(), runTransformed() and the other device hooks
#pragma once

#include "smpart_emu/emulator.hpp"

#include "smpart/control.hpp"
#include "smpart/detail/plan.hpp"

#include <cuda_runtime.h> // dim3, uint3

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace smpart {
namespace detail {
struct Tail;
} // namespace detail

namespace emu {
namespace internal {

/// Where a fiber stopped, and what lets it go on.
enum class Wait { kReady, kBarrier, kBoundary, kStep, kWarp, kDone };

#if defined(__x86_64__)
struct Context {
  void *sp = nullptr;
};
#else
struct Context {
  ucontext_t uc;
};
#endif

/// One emulated thread.
struct Fiber {
  Context ctx;
  char *stack = nullptr;
  Wait wait = Wait::kReady;
  uint3 tid{};
  unsigned linear = 0;
  unsigned long long value = 0, result = 0;
  int src = 0, pred = 0, count = 0;
  unsigned ballot = 0;
};

struct Cta {
  unsigned sm = 0; ///< index of the virtual SM (its %smid is Machine::ids[sm])
  uint3 phys{};
  dim3 grid;
  unsigned n = 0;
  std::unique_ptr<Fiber[]> fibers; // never moves: ucontext points into itself
  std::vector<unsigned char> smem; // this CTA's dynamic shared memory
  LaunchControl ctl{};
  bool started = false;
  // Transformed runs: what the last decision said.
  bool working = false;
  int slot = -1;
  /// Cleared its slot bit; `slot` stays until the hole is announced
  /// (slotChanged(-1)), but another CTA may already hold it.
  bool freed = false;
  bool tag = false;
  /// Drew a slot ticket that has not resolved yet (claimingSlot()): a
  /// CTA with a later ticket may hold a slot above the one it will take.
  bool claiming = false;
  bool left = false; ///< decided to leave (counted out of first_live)
  unsigned long long decided_seq = 0; ///< Machine::seq at its last go
  /// A chunk claimed ahead (claimed()) that decided() has not seen yet.
  bool claim_pending = false;
  unsigned long long claim_base = 0;
  /// Knob epoch and slot epoch its last go decision acted on.
  unsigned decided_epoch = 0, decided_slot_epoch = 0;
  /// State::resident_ctas when thread 0 resumed at its last two protocol
  /// steps: [1] is what its latest shared-state access saw, [0] the one
  /// before.
  unsigned resident_seen[2] = {0, 0};
  /// Its threads ended a logical block and no barrier of the CTA opened
  /// since: on a GPU, other warps may still be storing in that block, so
  /// nothing may say it is finished yet (givesBack()).
  bool unsynced = false;

  /// The CTA's protocol state, at the end of its dynamic shared memory.
  const detail::Tail &tail() const;
};

struct CoRun;

/// One launch of a kernel on the emulated GPU: its CTAs, knobs, device
/// state and the records the checks compare against.
struct Machine {
  dim3 block;
  unsigned threads = 0;
  Context sched;
  Cta *cta = nullptr;
  Fiber *fiber = nullptr;
  const OriginalBody *original = nullptr;
  const TransformedBody *transformed = nullptr;
  std::size_t smem_bytes = 0; ///< dynamic shared memory of each CTA
  Report *report = nullptr;
  Config cfg;
  std::mt19937_64 rng;
  std::vector<unsigned> ids; ///< %smid of each virtual SM (sparse)
  // Transformed runs.
  Knobs knobs{}; ///< the host's set, as the last knob call left it
  std::uint32_t launch_epoch = 0; ///< knobs.epoch of the launch's fresh set
  KnobImage image{}; ///< what the device polls (host-mapped on a GPU)
  /// A host knob write is half done: the image's words from here on still
  /// carry the previous set.
  unsigned write_from = kKnobImageWords;
  /// What weak reads of `image` return under Config::cached_host_reads.
  std::optional<KnobImage> cached_image;
  State state{};
  Notices notices{};
  LaunchControl ctl{};
  std::map<std::uint32_t, Knobs> history; ///< host knobs by (even) epoch
  /// The device copy of the knobs as published, by (even) epoch: what the
  /// decisions are checked against.
  std::map<std::uint32_t, Knobs> published;
  unsigned long long seq = 0; ///< counts decisions and slot moves
  std::vector<unsigned long long> slot_moved; ///< by SM id: seq of the last
                                              ///< release or compaction
  std::vector<unsigned> runs;
  std::vector<std::unique_ptr<Cta>> resident, pending;
  std::vector<unsigned> hw_count;
  unsigned long long clock_ns = 0;
  unsigned long long outside = 0;
  /// Report::ack_after_clean_ns: since when no held slot is forbidden by
  /// the device's unacknowledged epoch (0: one is, or none is pending),
  /// and the last acknowledged epoch seen in `notices`.
  unsigned long long clean_since_ns = 0;
  std::uint32_t seen_acked_epoch = 0;
  // Co-runs (runCoRun): the run this launch belongs to, and its record.
  CoRun *co = nullptr;
  CoKernelReport *co_report = nullptr;
  unsigned index = 0;
  unsigned long long id = 0;
  std::string name;
  bool arrived = false, host_preempted = false, last_notified = false,
       done_notified = false, ended = false;
  std::uint32_t saw_applied_epoch = 0; ///< last onKnobsApplied epoch

  void fail(const std::string &msg) {
    if (!report->ok)
      return;
    report->ok = false;
    report->error = msg + " [seed " + std::to_string(cfg.seed) +
                    "; replay: SMPART_EMU_SEED=" + std::to_string(cfg.seed) +
                    "]";
  }
  unsigned pick(unsigned n) { return n ? static_cast<unsigned>(rng() % n) : 0; }
  double uniform() { return (rng() >> 11) * (1.0 / 9007199254740992.0); }
};

/// A co-run: the launches sharing the emulated GPU.
struct CoRun {
  CoConfig cfg;
  CoReport *report = nullptr;
  std::vector<std::shared_ptr<Machine>> machines;
  unsigned long long step = 0;
  std::mt19937_64 rng;

  void fail(const std::string &msg) {
    if (!report->ok)
      return;
    report->ok = false;
    report->error = msg + " [seed " + std::to_string(cfg.seed) + "]";
  }
};

/// The launch whose CTA runs now. Kernel code reaches the emulator only
/// through argument-less hooks (device.cuh's detail::emulation functions,
/// the rt:: built-ins, a fiber's entry), so they find their launch here.
/// Set by CurrentMachine around everything that runs kernel code.
extern Machine *g_m;

/// Makes `m` the current launch for its lifetime, then restores the one
/// before (none, between the CTA steps of a co-run).
class CurrentMachine {
public:
  explicit CurrentMachine(Machine &m) : prev_(g_m) { g_m = &m; }
  ~CurrentMachine() { g_m = prev_; }
  CurrentMachine(const CurrentMachine &) = delete;
  CurrentMachine &operator=(const CurrentMachine &) = delete;

private:
  Machine *prev_;
};

inline bool maskHas(const std::uint32_t *mask, unsigned sm) {
  return (mask[sm / 32] >> (sm % 32)) & 1u;
}

/// The device knobs a kernel's CTAs act on now: the latest published copy.
inline const Knobs &currentDeviceKnobs(const Machine &m) {
  return m.published.rbegin()->second;
}

/// Blocks left to take: its CTAs may still take some.
inline bool mayTake(const Machine &m) {
  return m.arrived && !m.ended && m.state.next_block < m.ctl.total_blocks;
}

/// The anchor reported the launch finished.
inline bool finished(const Machine &m) {
  return m.notices.finished == m.ctl.generation;
}

// fibers.cpp
/// A CTA of m's block shape, its threads as fresh fibers.
std::unique_ptr<Cta> makeCta(Machine &m, uint3 phys, dim3 grid);
/// Gives the CTA's fiber stacks back to the pool.
void retire(Cta &c);
/// Runs CTA `c` until all its live threads wait at a block boundary
/// (kBoundary), thread 0 yields inside the protocol (kStep), or all have
/// exited (kDone). kReady signals an error (in m's report).
Wait runCta(Machine &m, Cta &c);
/// Called by the current fiber: stops it at `w` and resumes the scheduler.
void yieldFiber(Wait w);

// scheduler.cpp
/// The SM ids of a configuration: dense 0..n-1, or spread over several
/// mask words as on GPUs whose %smid is not dense.
std::vector<unsigned> smIds(const Config &c);
/// Enqueues `ctas` CTAs, as the runtime's launch (first) or grow does.
void launchCtas(Machine &m, unsigned long long ctas, bool first);
/// How many CTAs a launch or grow enqueues under the host knobs now.
unsigned long long ctasToLaunch(const Machine &m);
/// The launch of a transformed kernel, as libsmpart does it.
void launchTransformed(Machine &m, dim3 grid, dim3 block,
                       const TransformedBody &body, std::size_t dynamic_smem,
                       const SmMask *confined);
/// The hardware block scheduler: pending CTAs to SMs with room.
void place(Machine &m);
/// One scheduler step: readies resident CTA `i` of `m`, runs it to its
/// next yield point, notes what the device published and retires it if it
/// ended (m.resident[i] is then another CTA). False if the run failed.
bool stepCta(Machine &m, std::size_t i);
/// Gives back the stacks of every CTA still resident or pending.
void retireAll(Machine &m);

// chaos.cpp
using KnobWrite = std::function<void(volatile Knobs &)>;
/// Completes a host knob write left half done.
void closeWrite(Machine &m);
/// A complete host knob write (scripted, or the controller's).
void fullWrite(Machine &m, const KnobWrite &write);
/// A random mask over the SM ids, never empty.
SmMask randomMask(Machine &m);
/// A random controller's action at a random moment.
void knobAction(Machine &m);

// invariants.cpp
/// Co-runs: records a knob epoch the device published.
void notePublishedCo(Machine &m, const Knobs &d);
/// After every step of a CTA: checks and records a newly published epoch.
void notePublished(Machine &m);
/// The end of a launch: every counter back where a finished kernel leaves it.
void finalChecks(Machine &m);
/// Co-runs: a CTA of `m` took `count` blocks on SM id `sm` under `epoch`.
void coTake(Machine &m, const Cta &c, unsigned sm, unsigned epoch,
            unsigned count);
/// Co-runs with exclusive_sms: host masks of the active kernels disjoint.
void checkHostDisjoint(CoRun &co);

} // namespace internal
} // namespace emu
} // namespace smpart
