// CPU emulation of transformed kernels (test support). See emulator.hpp.
//
// Threads are ucontext fibers run by the calling OS thread: a fiber runs
// until it reaches a barrier, a warp collective, a logical-block boundary
// (the blockBoundary() hook at the top of Cta::next()), a protocol step
// (thread 0 inside the protocol: step(), around every access to shared
// state) or its end. A CTA advances by running its ready fibers; a barrier
// opens when every live thread of the CTA waits at one. The scheduler runs
// one CTA at a time from one yield point to the next and may turn knobs
// between any two: CTAs interleave inside the protocol, as on a GPU, while
// only one CTA at a time is inside a user's block body (switches happen at
// block boundaries and at protocol steps, where the other threads of the
// CTA wait at a barrier), which keeps `__shared__` as static storage and
// unlocked atomics correct. Every schedule is a pure function of the seed.
#include "smpart_emu/emulator.hpp"

#include "smpart/detail/emulation_hooks.hpp"
#include "smpart/detail/plan.hpp"
// For the layout of a CTA's protocol state (detail::Tail), which the checks
// read from the CTA's dynamic shared memory.
#include "smpart_emu/cuda_emu.hpp"
#include "smpart/device.cuh"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <vector>

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace smpart {
namespace emu {
namespace {

enum class Wait { kReady, kBarrier, kBoundary, kStep, kWarp, kDone };

#if defined(__x86_64__)
// A fiber switch that saves only what the SysV ABI makes callee-saved
// (ucontext's swapcontext also makes two signal-mask system calls per
// switch, which dominated the run time of the property tests).
extern "C" void smpart_emu_switch(void **save_sp, void *next_sp);
asm(R"(
  .text
  .globl smpart_emu_switch
  .type smpart_emu_switch,@function
smpart_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size smpart_emu_switch,.-smpart_emu_switch
)");
struct Context {
  void *sp = nullptr;
};
#else
struct Context {
  ucontext_t uc;
};
#endif

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
  bool left = false; ///< decided to leave (counted out of first_live)
  unsigned long long decided_seq = 0; ///< Machine::seq at its last go
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

  const detail::Tail &tail() const {
    return *reinterpret_cast<const detail::Tail *>(smem.data() + smem.size() -
                                                   kTailBytes);
  }
};

constexpr std::size_t kStackBytes = 96 * 1024;
std::vector<char *> &stackPool() {
  static std::vector<char *> pool;
  return pool;
}

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
  Knobs knobs{};     ///< the host's set, as the last knob call left it
  KnobImage image{}; ///< what the device polls (host-mapped on a GPU)
  /// A host knob write is half done: the image's words from here on still
  /// carry the previous set.
  unsigned write_from = kKnobImageWords;
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
  // Co-runs (runCoRun): the run this launch belongs to, and its record.
  struct CoRun *co = nullptr;
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
  unsigned pick(unsigned n) {
    return n ? static_cast<unsigned>(rng() % n) : 0;
  }
  double uniform() { return (rng() >> 11) * (1.0 / 9007199254740992.0); }
};

Machine *g_m = nullptr;

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

bool maskHas(const std::uint32_t *mask, unsigned sm) {
  return (mask[sm / 32] >> (sm % 32)) & 1u;
}
bool maskHas(const volatile Knobs &k, unsigned sm) {
  return (k.sm_mask[sm / 32] >> (sm % 32)) & 1u;
}

void notePublishedCo(Machine &m, const Knobs &d) {
  if (!m.co)
    return;
  CoPublish p{m.co->step, d.epoch, detail::loadMask(d), d.preempt != 0,
              d.ctas_per_sm};
  m.co_report->published.push_back(p);
}

/// The device knobs a kernel's CTAs act on now: the latest published copy.
const Knobs &currentDeviceKnobs(const Machine &m) {
  return m.published.rbegin()->second;
}

/// Blocks left to take: its CTAs may still take some.
bool mayTake(const Machine &m) {
  return m.arrived && !m.ended && m.state.next_block < m.ctl.total_blocks;
}


/// A CTA of `m` on SM id `sm` took blocks [base, base+count) under device
/// epoch `epoch`, inside its allocation.
void coTake(Machine &m, const Cta &c, unsigned sm, unsigned epoch,
            unsigned count) {
  CoRun &co = *m.co;
  m.co_report->takes.push_back({co.step, sm, epoch, count});
  CoReport &r = *co.report;
  bool shared = false;
  for (const auto &op : co.machines) {
    const Machine &o = *op;
    if (&o == &m || !o.arrived || o.ended)
      continue;
    for (const auto &oc : o.resident)
      if (oc->working && o.ids[oc->sm] == sm)
        shared = true;
    if (!mayTake(o) || o.published.empty())
      continue;
    const Knobs &d = currentDeviceKnobs(o);
    if (d.preempt || !maskHas(d.sm_mask, sm))
      continue;
    ++r.overlap_takes;
    if (co.cfg.exclusive_sms)
      return co.fail("kernel " + m.name + " took blocks on SM " +
                     std::to_string(sm) + " (epoch " + std::to_string(epoch) +
                     ") while kernel " + o.name + "'s current device knobs "
                     "(epoch " + std::to_string(d.epoch) + ") allow it");
  }
  if (shared)
    ++r.shared_sm_takes;
  (void)c;
}

/// exclusive_sms: the host masks of the kernels that may still take blocks
/// and are not preempted on the host are pairwise disjoint.
void checkHostDisjoint(CoRun &co) {
  if (!co.cfg.exclusive_sms)
    return;
  ++co.report->host_disjoint_checks;
  for (std::size_t i = 0; i < co.machines.size(); ++i) {
    const Machine &a = *co.machines[i];
    if (!mayTake(a) || a.knobs.preempt)
      continue;
    for (std::size_t j = i + 1; j < co.machines.size(); ++j) {
      const Machine &b = *co.machines[j];
      if (!mayTake(b) || b.knobs.preempt)
        continue;
      for (unsigned w = 0; w < kMaskWords; ++w)
        if (a.knobs.sm_mask[w] & b.knobs.sm_mask[w])
          return co.fail("host masks of kernels " + a.name + " and " + b.name +
                         " overlap at step " + std::to_string(co.step) +
                         " (word " + std::to_string(w) + ")");
    }
  }
}

void switchTo(Context &save, Context &next) {
#if defined(__x86_64__)
  smpart_emu_switch(&save.sp, next.sp);
#else
  swapcontext(&save.uc, &next.uc);
#endif
}

[[noreturn]] void fiberMain() {
  Machine &m = *g_m;
  if (m.transformed)
    (*m.transformed)(m.cta->ctl);
  else
    (*m.original)();
  Fiber *f = g_m->fiber;
  f->wait = Wait::kDone;
  switchTo(f->ctx, g_m->sched);
  __builtin_unreachable();
}

void initContext(Fiber &f) {
#if defined(__x86_64__)
  // The frame smpart_emu_switch pops: control words, six registers, and
  // fiberMain as the return address, placed so that fiberMain starts with
  // the stack alignment of a called function.
  auto top = reinterpret_cast<std::uintptr_t>(f.stack + kStackBytes) & ~std::uintptr_t{15};
  auto *slots = reinterpret_cast<std::uint64_t *>(top - 16);
  slots[0] = reinterpret_cast<std::uint64_t>(&fiberMain);
  std::uint64_t *sp = slots - 7; // r15 r14 r13 r12 rbx rbp below the return
  for (int i = 1; i <= 6; ++i)
    sp[i] = 0;
  std::uint32_t csr[2];
  asm volatile("stmxcsr %0" : "=m"(csr[0]));
  asm volatile("fnstcw %0" : "=m"(csr[1]));
  std::memcpy(sp, csr, 8);
  f.ctx.sp = sp;
#else
  getcontext(&f.ctx.uc);
  f.ctx.uc.uc_stack.ss_sp = f.stack;
  f.ctx.uc.uc_stack.ss_size = kStackBytes;
  f.ctx.uc.uc_link = nullptr;
  makecontext(&f.ctx.uc, reinterpret_cast<void (*)()>(&fiberMain), 0);
#endif
}

std::unique_ptr<Cta> makeCta(Machine &m, uint3 phys, dim3 grid) {
  auto c = std::make_unique<Cta>();
  c->phys = phys;
  c->grid = grid;
  c->n = m.threads;
  c->fibers.reset(new Fiber[m.threads]);
  c->smem.assign(m.smem_bytes, 0);
  unsigned i = 0;
  for (unsigned z = 0; z < m.block.z; ++z)
    for (unsigned y = 0; y < m.block.y; ++y)
      for (unsigned x = 0; x < m.block.x; ++x, ++i) {
        Fiber &f = c->fibers[i];
        f.tid = make_uint3(x, y, z);
        f.linear = i;
        auto &pool = stackPool();
        if (pool.empty()) {
          f.stack = new char[kStackBytes];
        } else {
          f.stack = pool.back();
          pool.pop_back();
        }
        initContext(f);
      }
  return c;
}

void retire(Cta &c) {
  for (unsigned i = 0; i < c.n; ++i)
    stackPool().push_back(c.fibers[i].stack);
  c.n = 0;
}

/// Resolves warp collectives whose live lanes all arrived. False if a warp
/// waits for lanes that wait elsewhere (divergent collective).
bool resolveWarps(Machine &m, Cta &c) {
  bool any = false;
  for (unsigned w = 0; w * 32 < c.n; ++w) {
    const unsigned lo = w * 32, hi = std::min(c.n, lo + 32);
    bool waiting = false, all = true;
    unsigned ballot = 0;
    for (unsigned i = lo; i < hi; ++i) {
      const Wait s = c.fibers[i].wait;
      if (s == Wait::kWarp) {
        waiting = true;
        if (c.fibers[i].value)
          ballot |= 1u << (i - lo);
      } else if (s != Wait::kDone) {
        all = false;
      }
    }
    if (!waiting)
      continue;
    if (!all) {
      m.fail("warp collective reached by only part of the live lanes of "
             "warp " + std::to_string(w));
      return false;
    }
    for (unsigned i = lo; i < hi; ++i) {
      Fiber &f = c.fibers[i];
      if (f.wait != Wait::kWarp)
        continue;
      const unsigned src = lo + static_cast<unsigned>(f.src);
      f.result = (src < hi && c.fibers[src].wait == Wait::kWarp)
                     ? c.fibers[src].value
                     : f.value;
      f.ballot = ballot;
    }
    for (unsigned i = lo; i < hi; ++i)
      if (c.fibers[i].wait == Wait::kWarp)
        c.fibers[i].wait = Wait::kReady;
    any = true;
  }
  return any;
}

/// Runs CTA `c` until all its live threads wait at a block boundary
/// (kBoundary), thread 0 yields inside the protocol (kStep), or all have
/// exited (kDone). kReady signals an error.
Wait runCta(Machine &m, Cta &c) {
  for (;;) {
    for (unsigned i = 0; i < c.n; ++i) {
      Fiber &f = c.fibers[i];
      if (f.wait != Wait::kReady)
        continue;
      threadIdx = f.tid;
      ::blockIdx = c.phys;
      blockDim = m.block;
      ::gridDim = c.grid;
      m.cta = &c;
      m.fiber = &f;
      switchTo(m.sched, f.ctx);
      if (!m.report->ok)
        return Wait::kReady;
    }
    unsigned barrier = 0, boundary = 0, step = 0, warp = 0, done = 0;
    int passed = 0;
    for (unsigned i = 0; i < c.n; ++i) {
      switch (c.fibers[i].wait) {
      case Wait::kBarrier:
        ++barrier;
        passed += c.fibers[i].pred != 0;
        break;
      case Wait::kBoundary: ++boundary; break;
      case Wait::kStep: ++step; break;
      case Wait::kWarp: ++warp; break;
      case Wait::kDone: ++done; break;
      case Wait::kReady: break;
      }
    }
    if (done == c.n)
      return Wait::kDone;
    if (step) // thread 0 inside the protocol; the others wait at its barrier
      return Wait::kStep;
    if (warp) {
      if (!resolveWarps(m, c))
        return Wait::kReady;
      continue;
    }
    if (barrier + done == c.n) {
      c.unsynced = false;
      for (unsigned i = 0; i < c.n; ++i)
        if (c.fibers[i].wait == Wait::kBarrier) {
          c.fibers[i].count = passed;
          c.fibers[i].wait = Wait::kReady;
        }
      continue;
    }
    if (boundary + done == c.n) {
      if (done) {
        m.fail("threads of one CTA left the kernel while others went on to "
               "the next logical block");
        return Wait::kReady;
      }
      return Wait::kBoundary;
    }
    m.fail("threads of one CTA wait at different barriers (" +
           std::to_string(barrier) + " at __syncthreads, " +
           std::to_string(boundary) + " at the block boundary)");
    return Wait::kReady;
  }
}

void yieldFiber(Wait w) {
  Fiber *f = g_m->fiber;
  f->wait = w;
  switchTo(f->ctx, g_m->sched);
}

unsigned long long blockId(const Machine &m, unsigned x, unsigned y,
                           unsigned z) {
  return x + static_cast<unsigned long long>(m.ctl.grid_x) *
                 (y + static_cast<unsigned long long>(m.ctl.grid_y) * z);
}

/// Enqueues `ctas` CTAs, as the runtime's launch (first) or grow does.
void launchCtas(Machine &m, unsigned long long ctas, bool first) {
  const dim3 grid(static_cast<unsigned>(ctas));
  for (unsigned long long i = 0; i < ctas; ++i) {
    std::unique_ptr<Cta> c =
        makeCta(m, make_uint3(static_cast<unsigned>(i), 0, 0), grid);
    c->ctl = m.ctl;
    c->ctl.first_instance = first ? 1u : 0u;
    c->ctl.min_epoch = m.knobs.epoch; // as Kernel::control()
    m.pending.push_back(std::move(c));
  }
  m.report->ctas += ctas;
}

unsigned long long fillCtas(const Machine &m) {
  SmMask all;
  for (unsigned id : m.ids)
    all.set(id);
  return detail::physicalCtas(
      m.cfg.num_sms, m.cfg.occupancy, m.knobs.ctas_per_sm,
      (detail::loadMask(m.knobs) & all) == all, m.ctl.total_blocks);
}

/// A host knob write, as KernelHandle does it (detail::writeKnobs).
/// Sometimes only the first words of the image are written until a later
/// step, so that the device meets a write in progress.
template <class Write> void hostWrite(Machine &m, Write write) {
  if (m.write_from < kKnobImageWords)
    return;
  detail::writeKnobs(m.knobs, m.image, write);
  m.history[m.knobs.epoch] = m.knobs;
  if (m.cfg.chaos && m.uniform() < 0.3) {
    // Undo the tail of the image: it still holds the previous set.
    const Knobs before = std::prev(m.history.end(), 2)->second;
    m.write_from = 1 + m.pick(kKnobImageWords - 1);
    detail::storeKnobImage(m.image, before, m.write_from);
  }
}

void closeWrite(Machine &m) {
  if (m.write_from >= kKnobImageWords)
    return;
  detail::storeKnobImage(m.image, m.knobs, m.write_from);
  m.write_from = kKnobImageWords;
}

/// A complete knob write (scripted, or the controller's).
template <class Write> void fullWrite(Machine &m, Write write) {
  closeWrite(m);
  detail::writeKnobs(m.knobs, m.image, write);
  m.history[m.knobs.epoch] = m.knobs;
}

SmMask randomMask(Machine &m) {
  SmMask mask;
  if (m.uniform() < 0.3) {
    for (unsigned id : m.ids)
      mask.set(id);
    return mask;
  }
  for (unsigned id : m.ids)
    if (m.uniform() < 0.6)
      mask.set(id);
  if (mask.none()) // the runtime refuses an empty mask
    mask.set(m.ids[m.pick(static_cast<unsigned>(m.ids.size()))]);
  return mask;
}

/// A controller's action at a random moment.
void knobAction(Machine &m) {
  Report &r = *m.report;
  if (m.write_from < kKnobImageWords && m.uniform() < 0.5)
    return closeWrite(m);
  switch (m.pick(7)) {
  case 0: {
    const SmMask mask = randomMask(m);
    hostWrite(m, [&](volatile Knobs &k) { detail::storeMask(k, mask); });
    ++r.mask_changes;
    break;
  }
  case 1: {
    const unsigned n = 1 + m.pick(m.cfg.occupancy);
    hostWrite(m, [&](volatile Knobs &k) { k.ctas_per_sm = n; });
    break;
  }
  case 2: {
    const unsigned n = m.pick(m.cfg.occupancy + 1);
    hostWrite(m, [&](volatile Knobs &k) { k.bypass_ctas_per_sm = n; });
    break;
  }
  case 3:
    if (!m.knobs.preempt) {
      hostWrite(m, [](volatile Knobs &k) { k.preempt = 1; });
      ++r.preemptions;
    }
    break;
  case 4: // resume: the anchor goes on; sometimes new CTAs as well
    if (m.knobs.preempt) {
      hostWrite(m, [](volatile Knobs &k) { k.preempt = 0; });
      if (m.uniform() < 0.5)
        launchCtas(m, fillCtas(m), false);
      ++r.resumes;
    }
    break;
  case 5: // grow while blocks remain to take
    if (!m.knobs.preempt && !m.notices.last_block_taken &&
        m.pending.size() < m.cfg.num_sms * m.cfg.occupancy) {
      launchCtas(m, 1 + m.pick(m.cfg.num_sms * m.cfg.occupancy), false);
      ++r.grows;
    }
    break;
  case 6: {
    const unsigned ns = m.pick(4) * 2000;
    hostWrite(m, [&](volatile Knobs &k) { k.chunk_target_ns = ns; });
    break;
  }
  }
}

/// The hardware block scheduler: pending CTAs, in order, go to a random SM
/// with room.
void place(Machine &m) {
  while (!m.pending.empty()) {
    std::vector<unsigned> room;
    for (unsigned s = 0; s < m.cfg.num_sms; ++s)
      if (m.hw_count[s] < m.cfg.occupancy)
        room.push_back(s);
    if (room.empty())
      return;
    std::unique_ptr<Cta> c = std::move(m.pending.front());
    m.pending.erase(m.pending.begin());
    c->sm = room[m.pick(static_cast<unsigned>(room.size()))];
    ++m.hw_count[c->sm];
    m.resident.push_back(std::move(c));
  }
}

/// Called after every step of a CTA: a device knob epoch that just became
/// even is recorded, and must carry exactly what the host wrote under it
/// (a torn copy published as consistent would fail here).
void notePublished(Machine &m) {
  const std::uint32_t e = m.state.knobs.epoch;
  if (e == 0 || m.published.count(e)) // 0: before the launch handshake
    return;
  Knobs d{};
  if (!detail::loadKnobImage(m.state.knobs.copy, d) || d.epoch != e)
    return m.fail("the device published knob epoch " + std::to_string(e) +
                  " over a copy that does not hold it whole");
  m.published[e] = d;
  notePublishedCo(m, d);
  const auto it = m.history.find(e);
  if (it == m.history.end())
    return m.fail("the device published knob epoch " + std::to_string(e) +
                  ", which the host never wrote");
  const Knobs &h = it->second;
  bool same = d.ctas_per_sm == h.ctas_per_sm &&
              d.bypass_ctas_per_sm == h.bypass_ctas_per_sm &&
              d.preempt == h.preempt &&
              d.chunk_target_ns == h.chunk_target_ns &&
              d.stall_grace_ns == h.stall_grace_ns;
  for (unsigned w = 0; w < kMaskWords; ++w)
    same = same && d.sm_mask[w] == h.sm_mask[w];
  if (!same)
    m.fail("the device published knob epoch " + std::to_string(e) +
           " with values that differ from the host's (torn copy)");
}

void finalChecks(Machine &m) {
  for (std::size_t b = 0; b < m.runs.size(); ++b)
    if (m.runs[b] != 1)
      return m.fail("logical block " + std::to_string(b) + " ran " +
                    std::to_string(m.runs[b]) + " times");
  if (m.state.blocks_done != m.ctl.total_blocks)
    return m.fail("blocks_done " + std::to_string(m.state.blocks_done) +
                  " != " + std::to_string(m.ctl.total_blocks));
  for (unsigned s = 0; s < kMaxSms; ++s)
    if (m.state.sm_slots[s])
      return m.fail("SM id " + std::to_string(s) + " still has slots held");
  if (m.state.resident_ctas)
    return m.fail("resident_ctas not back to 0");
  if (m.state.first_live)
    return m.fail("first_live not back to 0");
  if (m.notices.finished != m.ctl.generation)
    return m.fail("the anchor never reported the kernel finished");
  if (!m.notices.last_block_taken)
    return m.fail("the last-block notification never fired");
  if (m.outside && !m.notices.stalls)
    return m.fail("blocks ran outside the allocation without a reported stall");
}

/// The SM ids of a configuration: dense 0..n-1, or spread over several
/// mask words as on GPUs whose %smid is not dense.
std::vector<unsigned> smIds(const Config &c) {
  std::vector<unsigned> ids(c.num_sms);
  if (c.id_span) { // distinct ids drawn from [0, id_span), in order
    const unsigned span = std::min(kMaxSms, std::max(c.id_span, c.num_sms));
    std::mt19937_64 rng(c.seed * 0x9e3779b97f4a7c15ull + 1);
    std::vector<unsigned> all(span);
    for (unsigned i = 0; i < span; ++i)
      all[i] = i;
    for (unsigned i = 0; i < c.num_sms; ++i)
      std::swap(all[i], all[i + rng() % (span - i)]);
    all.resize(c.num_sms);
    std::sort(all.begin(), all.end());
    return all;
  }
  for (unsigned i = 0; i < c.num_sms; ++i)
    ids[i] = c.sparse_ids ? std::min(kMaxSms - 1, i * c.id_stride + c.id_offset)
                          : i;
  return ids;
}

} // namespace

Report runOriginal(dim3 grid, dim3 block, const OriginalBody &body,
                   std::size_t dynamic_smem) {
  Report report;
  Machine m;
  m.block = block;
  m.threads = block.x * block.y * block.z;
  m.original = &body;
  m.report = &report;
  m.smem_bytes = dynamic_smem + 16;
  g_m = &m;
  for (unsigned z = 0; z < grid.z && report.ok; ++z)
    for (unsigned y = 0; y < grid.y && report.ok; ++y)
      for (unsigned x = 0; x < grid.x && report.ok; ++x) {
        std::unique_ptr<Cta> c = makeCta(m, make_uint3(x, y, z), grid);
        const Wait w = runCta(m, *c);
        if (w == Wait::kBoundary || w == Wait::kStep)
          m.fail("original kernel reached the persistent-block protocol");
        retire(*c);
        ++report.ctas;
      }
  g_m = nullptr;
  return report;
}

Report runTransformed(dim3 grid, dim3 block, const TransformedBody &body,
                      const Config &config) {
  Report report;
  Machine m;
  m.cfg = config;
  m.cfg.occupancy = std::max(1u, std::min(config.occupancy, kMaxCtasPerSm));
  m.rng.seed(config.seed);
  m.block = block;
  m.threads = block.x * block.y * block.z;
  m.transformed = &body;
  m.report = &report;
  m.smem_bytes = ((config.dynamic_smem + 15) & ~std::size_t{15}) + kTailBytes;
  m.hw_count.assign(m.cfg.num_sms, 0);
  m.ids = smIds(m.cfg);
  m.slot_moved.assign(kMaxSms, 0);
  g_m = &m;
  // The launch, as libsmpart does it.
  detail::initKnobs(m.knobs, m.cfg.occupancy);
  m.knobs.stall_grace_ns = 20000;
  if (config.chaos && m.uniform() < 0.5) { // sometimes launched confined
    const SmMask mask = randomMask(m);
    detail::storeMask(m.knobs, mask);
  }
  m.history[m.knobs.epoch] = m.knobs;
  detail::storeKnobImage(m.image, m.knobs);
  m.ctl.knobs = &m.image;
  m.ctl.state = &m.state;
  m.ctl.notices = &m.notices;
  detail::setLogicalGrid(m.ctl, grid.x, grid.y, grid.z);
  m.ctl.generation = 1;
  m.runs.assign(m.ctl.total_blocks, 0);
  const unsigned long long first = fillCtas(m);
  // The State starts zero, as a slot's first launch copies it; the first
  // CTA initialises it (the launch handshake). Until then, what the first
  // CTA will publish is at least these knobs.
  m.ctl.first_ctas = static_cast<unsigned>(first);
  m.published[m.knobs.epoch] = m.knobs;
  launchCtas(m, first, true);
  if (config.chaos && m.uniform() < 0.3) // a knob write before any CTA ran
    knobAction(m);

  // Chaos for a while, then the controller settles: the last write is
  // completed and preemption cleared, and nothing more is launched. The
  // kernel must then finish with the CTAs it has.
  const unsigned long long chaos_steps =
      config.chaos ? 200 + m.pick(static_cast<unsigned>(40 * m.ctl.total_blocks + 1))
                   : 0;
  const unsigned long long limit = chaos_steps + 400000;
  while (report.ok) {
    place(m);
    if (m.resident.empty() && m.pending.empty())
      break;
    ++report.steps;
    m.clock_ns += 200; // a poll every 20 steps, the stall grace in 100
    for (const auto &[at, write] : config.script)
      if (report.steps == at)
        fullWrite(m, write);
    if (report.steps == chaos_steps + 1 && config.settle) {
      closeWrite(m);
      if (m.knobs.preempt)
        fullWrite(m, [](volatile Knobs &k) { k.preempt = 0; });
    }
    if (report.steps > limit) {
      m.fail("stall: no completion " + std::to_string(limit - chaos_steps) +
             " steps after the controller stopped (" +
             std::to_string(m.state.blocks_done) + " of " +
             std::to_string(m.ctl.total_blocks) + " blocks counted, " +
             std::to_string(m.resident.size()) + " CTAs resident, " +
             std::to_string(m.pending.size()) + " pending, next_block " +
             std::to_string(m.state.next_block) + ")");
      break;
    }
    if (report.steps <= chaos_steps && m.uniform() < config.knob_rate) {
      knobAction(m);
      continue;
    }
    if (m.resident.empty())
      continue; // pending CTAs wait for room
    const unsigned i = m.pick(static_cast<unsigned>(m.resident.size()));
    Cta &c = *m.resident[i];
    for (unsigned t = 0; t < c.n; ++t)
      if (c.fibers[t].wait == Wait::kBoundary || c.fibers[t].wait == Wait::kStep)
        c.fibers[t].wait = Wait::kReady;
    const Wait w = runCta(m, c);
    if (w == Wait::kReady)
      break;
    notePublished(m);
    if (w == Wait::kDone) {
      --m.hw_count[c.sm];
      retire(c);
      m.resident[i] = std::move(m.resident.back());
      m.resident.pop_back();
    }
  }
  report.stalls = m.notices.stalls;
  report.resident_at_end = static_cast<unsigned>(m.resident.size());
  report.taken_at_end = m.state.next_block;
  report.outside_blocks = m.outside;
  if (report.ok)
    finalChecks(m);
  for (auto &c : m.resident)
    retire(*c);
  for (auto &c : m.pending)
    retire(*c);
  g_m = nullptr;
  return report;
}


// ---------------------------------------------------------------------------
// Co-runs.

namespace {

Machine &machineOf(const std::shared_ptr<void> &p) {
  return *static_cast<Machine *>(p.get());
}

/// A host knob write, as KernelHandle does it (complete, under the lock).
template <class Write> void controlWrite(Machine &m, Write write) {
  fullWrite(m, write);
  m.co_report->host_writes.emplace_back(m.co->step, m.knobs);
}

bool finished(const Machine &m) {
  return m.notices.finished == m.ctl.generation;
}


/// The launch, as libsmpart's launchTransformedSteps does it: fresh knobs,
/// the observer (the controller writes this launch's knobs now), then the
/// state image from the knobs and the first instance's CTAs.
void coLaunch(CoRun &co, Machine &m, const CoKernel &k) {
  m.arrived = true;
  m.co_report->arrived_step = co.step;
  m.block = k.block;
  m.threads = k.block.x * k.block.y * k.block.z;
  m.transformed = &k.body;
  m.smem_bytes = ((k.dynamic_smem + 15) & ~std::size_t{15}) + kTailBytes;
  detail::initKnobs(m.knobs, m.cfg.occupancy);
  m.knobs.stall_grace_ns = 20000;
  m.history[m.knobs.epoch] = m.knobs;
  detail::storeKnobImage(m.image, m.knobs);
  m.ctl.knobs = &m.image;
  m.ctl.state = &m.state;
  m.ctl.notices = &m.notices;
  detail::setLogicalGrid(m.ctl, k.grid.x, k.grid.y, k.grid.z);
  m.ctl.generation = 1;
  m.runs.assign(m.ctl.total_blocks, 0);
  if (co.cfg.observer)
    co.cfg.observer->onLaunch(std::make_shared<EmulatedKernel>(
        std::shared_ptr<void>(co.machines[m.index])));
  const unsigned long long first = detail::physicalCtas(
      m.cfg.num_sms, m.cfg.occupancy, m.knobs.ctas_per_sm,
      detail::loadMask(m.knobs).all(), m.ctl.total_blocks);
  m.ctl.first_ctas = static_cast<unsigned>(first);
  m.published[m.knobs.epoch] = m.knobs;
  notePublishedCo(m, m.knobs);
  launchCtas(m, first, true);
}

} // namespace

EmulatedKernel::EmulatedKernel(std::shared_ptr<void> machine)
    : M(std::move(machine)) {}
unsigned long long EmulatedKernel::id() const { return machineOf(M).id; }
std::string EmulatedKernel::name() const { return machineOf(M).name; }
unsigned EmulatedKernel::occupancy() const {
  return machineOf(M).cfg.occupancy;
}
unsigned EmulatedKernel::index() const { return machineOf(M).index; }
Knobs EmulatedKernel::hostKnobs() const { return machineOf(M).knobs; }
Knobs EmulatedKernel::deviceKnobs() const {
  const Machine &m = machineOf(M);
  return m.published.empty() ? m.knobs : currentDeviceKnobs(m);
}

Status EmulatedKernel::setSmMask(const SmMask &mask) {
  Machine &m = machineOf(M);
  if (mask.none())
    return Status(Errc::kInvalidArgument,
                  "setSmMask on kernel " + m.name +
                      ": an empty mask leaves no SM to run on; use preempt()");
  controlWrite(m, [&](volatile Knobs &k) { detail::storeMask(k, mask); });
  ++m.report->mask_changes;
  return Status();
}
Status EmulatedKernel::setCtasPerSm(unsigned n) {
  Machine &m = machineOf(M);
  if (n == 0 || n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setCtasPerSm(" + std::to_string(n) + ") on kernel " + m.name);
  controlWrite(m, [&](volatile Knobs &k) { k.ctas_per_sm = n; });
  return Status();
}
Status EmulatedKernel::setBypassCtasPerSm(unsigned n) {
  Machine &m = machineOf(M);
  if (n > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument,
                  "setBypassCtasPerSm(" + std::to_string(n) + ")");
  controlWrite(m, [&](volatile Knobs &k) { k.bypass_ctas_per_sm = n; });
  return Status();
}
Status EmulatedKernel::preempt() {
  Machine &m = machineOf(M);
  m.host_preempted = true;
  controlWrite(m, [](volatile Knobs &k) { k.preempt = 1; });
  ++m.report->preemptions;
  return Status();
}
Status EmulatedKernel::setKnobs(const KnobSet &set) {
  Machine &m = machineOf(M);
  if (set.mask.none() || set.ctas_per_sm == 0 ||
      set.ctas_per_sm > kMaxCtasPerSm || set.bypass_ctas_per_sm > kMaxCtasPerSm)
    return Status(Errc::kInvalidArgument, "setKnobs on kernel " + m.name);
  if (set.preempt && !m.host_preempted)
    ++m.report->preemptions;
  if (detail::loadMask(m.knobs) != set.mask)
    ++m.report->mask_changes;
  m.host_preempted = set.preempt;
  controlWrite(m, [&](volatile Knobs &k) {
    detail::storeMask(k, set.mask);
    k.ctas_per_sm = set.ctas_per_sm;
    k.bypass_ctas_per_sm = set.bypass_ctas_per_sm;
    k.preempt = set.preempt ? 1u : 0u;
  });
  return Status();
}
Status EmulatedKernel::resume() {
  Machine &m = machineOf(M);
  m.host_preempted = false;
  if (m.knobs.preempt) // as KernelHandle::resume: no second write
    controlWrite(m, [](volatile Knobs &k) { k.preempt = 0; });
  ++m.report->resumes;
  return grow();
}
Status EmulatedKernel::grow() {
  Machine &m = machineOf(M);
  if (m.host_preempted)
    return Status(Errc::kPreempted,
                  "grow on preempted kernel " + m.name + ": resume it");
  if (finished(m) || m.notices.last_block_taken)
    return Status();
  const unsigned long long ctas = detail::physicalCtas(
      m.cfg.num_sms, m.cfg.occupancy, m.knobs.ctas_per_sm,
      detail::loadMask(m.knobs).all(), m.ctl.total_blocks);
  launchCtas(m, ctas, false);
  ++m.report->grows;
  return Status();
}
bool EmulatedKernel::knobsApplied() const {
  const Machine &m = machineOf(M);
  return detail::knobsAppliedAt(m.notices, finished(m), m.knobs.epoch);
}
Status EmulatedKernel::progress(ControlProgress &out) const {
  const Machine &m = machineOf(M);
  out = ControlProgress{};
  out.total = m.ctl.total_blocks;
  out.finished = finished(m);
  out.taken = out.finished ? out.total
                           : std::min<unsigned long long>(m.notices.taken,
                                                          out.total);
  out.done = out.finished ? out.total : m.notices.done;
  return Status();
}

CoReport runCoRun(const std::vector<CoKernel> &kernels,
                  const CoConfig &config) {
  CoReport report;
  CoRun co;
  co.cfg = config;
  co.report = &report;
  co.rng.seed(config.seed * 0x2545f4914f6cdd1dull + 7);
  Config shape;
  shape.seed = config.seed;
  shape.num_sms = std::max(1u, config.num_sms);
  shape.id_span = config.id_span;
  const std::vector<unsigned> ids = smIds(shape);
  report.sm_ids = ids;
  report.kernels.resize(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    auto m = std::make_shared<Machine>();
    m->cfg = shape;
    m->cfg.chaos = false;
    m->cfg.occupancy =
        std::max(1u, std::min(kernels[i].occupancy, kMaxCtasPerSm));
    m->rng.seed(config.seed * 0x9e3779b97f4a7c15ull + 1000 + i);
    m->ids = ids;
    m->hw_count.assign(shape.num_sms, 0);
    m->slot_moved.assign(kMaxSms, 0);
    m->co = &co;
    m->co_report = &report.kernels[i];
    m->report = &report.kernels[i].report;
    m->index = static_cast<unsigned>(i);
    m->id = i + 1;
    m->name = kernels[i].name;
    report.kernels[i].name = kernels[i].name;
    report.kernels[i].id = m->id;
    co.machines.push_back(std::move(m));
  }
  auto allOk = [&] {
    if (!report.ok)
      return false;
    for (const CoKernelReport &k : report.kernels)
      if (!k.report.ok) {
        report.ok = false;
        report.error = k.name + ": " + k.report.error;
        return false;
      }
    return true;
  };
  // Notifications, as libsmpart's notifier delivers them: the last block
  // (or completion) once, then completion once.
  auto notify = [&] {
    for (auto &mp : co.machines) {
      Machine &m = *mp;
      if (!m.arrived || m.ended)
        continue;
      const bool done = finished(m);
      if (!done &&
          detail::newlyApplied(m.knobs, m.notices, done, m.saw_applied_epoch) &&
          config.observer)
        config.observer->onKnobsApplied(m.id);
      if (!m.last_notified && (done || m.notices.last_block_taken)) {
        m.last_notified = true;
        m.co_report->last_block_step = co.step;
        if (config.observer)
          config.observer->onLastBlockTaken(m.id);
      }
      if (done && !m.done_notified) {
        m.done_notified = true;
        m.co_report->done_step = co.step;
        if (config.observer)
          config.observer->onDone(m.id);
      }
      if (m.done_notified && m.resident.empty() && m.pending.empty()) {
        m.ended = true; // every CTA gone: the per-launch final checks
        m.report->resident_at_end = 0;
        m.report->taken_at_end = m.state.next_block;
        m.report->outside_blocks = m.outside;
        m.report->stalls = m.notices.stalls;
        g_m = &m;
        finalChecks(m);
        g_m = nullptr;
      }
    }
  };

  while (allOk()) {
    ++co.step;
    report.steps = co.step;
    if (config.observer)
      config.observer->onStep(co.step);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      Machine &m = *co.machines[i];
      m.clock_ns += 200;
      if (!m.arrived && kernels[i].arrive_at_step < co.step) {
        coLaunch(co, m, kernels[i]);
        m.clock_ns = co.step * 200;
      }
    }
    if (!allOk())
      break;
    checkHostDisjoint(co);
    std::vector<std::pair<Machine *, std::size_t>> ready;
    bool all_ended = true;
    for (auto &mp : co.machines) {
      Machine &m = *mp;
      all_ended = all_ended && m.ended;
      if (!m.arrived || m.ended)
        continue;
      place(m);
      for (std::size_t c = 0; c < m.resident.size(); ++c)
        ready.emplace_back(&m, c);
    }
    if (all_ended)
      break;
    if (co.step > config.step_limit) {
      std::string what;
      for (auto &mp : co.machines)
        if (!mp->ended)
          what += " " + mp->name + ": " + std::to_string(mp->state.blocks_done) +
                  "/" + std::to_string(mp->ctl.total_blocks) + " done, " +
                  std::to_string(mp->resident.size()) + " resident, preempt " +
                  std::to_string(mp->knobs.preempt) + ";";
      co.fail("stall: the co-run did not complete in " +
              std::to_string(config.step_limit) + " steps:" + what);
      break;
    }
    if (ready.empty())
      continue; // waiting for an arrival
    const auto [mp, i] =
        ready[static_cast<std::size_t>(co.rng() % ready.size())];
    Machine &m = *mp;
    g_m = &m;
    ++m.report->steps;
    Cta &c = *m.resident[i];
    for (unsigned t = 0; t < c.n; ++t)
      if (c.fibers[t].wait == Wait::kBoundary || c.fibers[t].wait == Wait::kStep)
        c.fibers[t].wait = Wait::kReady;
    const Wait w = runCta(m, c);
    if (w == Wait::kReady) {
      g_m = nullptr;
      allOk();
      break;
    }
    notePublished(m);
    if (w == Wait::kDone) {
      --m.hw_count[c.sm];
      retire(c);
      m.resident[i] = std::move(m.resident.back());
      m.resident.pop_back();
    }
    g_m = nullptr;
    if (!allOk())
      break;
    notify();
  }
  allOk();
  for (auto &mp : co.machines) {
    for (auto &c : mp->resident)
      retire(*c);
    for (auto &c : mp->pending)
      retire(*c);
    mp->resident.clear();
    mp->pending.clear();
  }
  return report;
}

namespace rt {
int barrier(int pred) {
  g_m->fiber->pred = pred;
  yieldFiber(Wait::kBarrier);
  return g_m->fiber->count;
}
unsigned long long warpExchange(unsigned long long value, int src,
                                unsigned *ballot) {
  Fiber *f = g_m->fiber;
  f->value = value;
  f->src = src;
  yieldFiber(Wait::kWarp);
  f = g_m->fiber;
  if (ballot)
    *ballot = f->ballot;
  return f->result;
}
unsigned laneId() { return g_m->fiber->linear % 32; }
void *dynamicSmem() { return g_m->cta->smem.data(); }
} // namespace rt

} // namespace emu

namespace detail {
namespace emulation {

unsigned smid() { return emu::g_m->ids.empty() ? emu::g_m->cta->sm
                                               : emu::g_m->ids[emu::g_m->cta->sm]; }

unsigned smIdBound() {
  const emu::Machine &m = *emu::g_m;
  if (m.ids.empty())
    return m.cfg.num_sms;
  return *std::max_element(m.ids.begin(), m.ids.end()) + 1;
}

void blockBoundary() {
  if (!emu::g_m->transformed) {
    emu::g_m->fail("blockBoundary() in an original kernel");
    return;
  }
  emu::Cta &c = *emu::g_m->cta;
  if (c.working) // this thread ended a logical block
    c.unsynced = true;
  emu::yieldFiber(emu::Wait::kBoundary);
}

void givesBack(const char *what) {
  emu::Machine &m = *emu::g_m;
  if (m.cta->unsynced)
    m.fail(std::string("thread 0 gave back ") + what +
           " before the barrier that completes its CTA's last block (other "
           "warps may still be storing in it)");
}

void step() {
  if (!emu::g_m->transformed) {
    emu::g_m->fail("a protocol step in an original kernel");
    return;
  }
  emu::yieldFiber(emu::Wait::kStep);
  emu::Cta &c = *emu::g_m->cta;
  c.resident_seen[0] = c.resident_seen[1];
  c.resident_seen[1] = emu::g_m->state.resident_ctas;
}

unsigned long long globalTimerNs() { return emu::g_m->clock_ns; }

void *dynamicSmem() { return emu::g_m->cta->smem.data(); }
unsigned dynamicSmemSize() {
  return static_cast<unsigned>(emu::g_m->cta->smem.size());
}

void slotChanged(int slot) {
  emu::Machine &m = *emu::g_m;
  emu::Cta &c = *m.cta;
  if (c.slot >= 0 && slot != c.slot) // a hole opened on this SM
    m.slot_moved[smid()] = ++m.seq;
  c.freed = false;
  c.slot = slot;
  c.working = false; // until it takes blocks under the new slot
  c.tag = false;
}

void slotFreed() {
  emu::Cta &c = *emu::g_m->cta;
  c.freed = true; // another CTA may claim c.slot now
  c.working = false;
  c.tag = false;
}

void recordLoad(bool bypass) {
  emu::Machine &m = *emu::g_m;
  ++m.report->loads;
  m.report->tagged_loads += bypass;
  if (m.transformed && bypass != m.cta->tag)
    m.fail("a load's bypass flag differs from its CTA's tag");
}

void decided(unsigned sm, int slot, bool go, unsigned long long base,
             unsigned count, bool bypass, unsigned epoch, bool outside) {
  emu::Machine &m = *emu::g_m;
  emu::Cta &c = *m.cta;
  if (std::getenv("SMPART_EMU_TRACE"))
    std::fprintf(stderr,
                 "%s t=%llu sm=%u slot=%d go=%d base=%llu n=%u epoch=%u "
                 "outside=%d host_epoch=%u dev_epoch=%u\n",
                 m.name.c_str(), m.clock_ns, sm, slot, go, base, count, epoch,
                 outside, m.knobs.epoch, m.state.knobs.epoch);
  if (sm != smid())
    return m.fail("decision names SM " + std::to_string(sm) +
                  " but the CTA runs on SM " + std::to_string(smid()));
  if (!go) {
    // Slots it held were released before (the final check finds leaks).
    if (c.slot >= 0)
      return m.fail("a CTA on SM " + std::to_string(sm) +
                    " leaves holding slot " + std::to_string(c.slot));
    c.working = false;
    c.tag = false;
    c.left = true;
    return;
  }
  ++m.report->chunks;
  const std::string where = "CTA on SM " + std::to_string(sm) + " slot " +
                            std::to_string(slot) + " (epoch " +
                            std::to_string(epoch) + ")";
  if (base + count > m.ctl.total_blocks || count == 0)
    return m.fail(where + " took blocks outside the grid");
  for (unsigned long long b = base; b < base + count; ++b)
    if (++m.runs[b] > 1)
      return m.fail("logical block " + std::to_string(b) + " taken twice");
  // Against the device's copy of the knobs under the epoch the CTA
  // decided under, as it was published.
  auto it = m.published.find(epoch);
  if (it == m.published.end())
    return m.fail(where + " decided under an epoch the device never published");
  const Knobs &k = it->second;
  if (k.preempt)
    return m.fail(where + " took blocks under preemption");
  if (outside) {
    ++m.outside;
    // Only the anchor: of the first instance, the last one counted out.
    bool anchor = c.ctl.first_instance && m.state.first_live == 0;
    for (const auto &o : m.resident)
      if (o.get() != &c && o->ctl.first_instance && !o->left)
        anchor = false;
    if (!anchor)
      return m.fail(where + " ran outside its allocation but is not the anchor");
    if (c.slot >= 0)
      return m.fail(where + " ran outside its allocation holding a slot");
    // Its read of resident_ctas (the access before the take) saw none.
    if (c.resident_seen[0] != 0)
      return m.fail(where + " ran outside its allocation while " +
                    std::to_string(c.resident_seen[0]) + " CTAs held slots");
    if (!m.notices.stalls)
      return m.fail(where + " ran outside its allocation with no stall reported");
    c.working = false;
    c.tag = false;
    if (bypass)
      return m.fail(where + " is tagged outside its allocation");
    return;
  }
  if (!((k.sm_mask[sm / 32] >> (sm % 32)) & 1u))
    return m.fail(where + " took blocks while its SM is outside the mask");
  if (slot < 0 || static_cast<unsigned>(slot) >= k.ctas_per_sm)
    return m.fail(where + " took blocks with the target at " +
                  std::to_string(k.ctas_per_sm) + " CTAs per SM");
  if (slot != c.slot)
    return m.fail(where + " but its last slot change named slot " +
                  std::to_string(c.slot));
  if (!((m.state.sm_slots[sm] >> slot) & 1u))
    return m.fail(where + ": slot bit not set in the SM's slot word");
  for (const auto &o : m.resident)
    if (o.get() != &c && o->sm == c.sm && o->slot == slot && !o->freed)
      return m.fail(where + " shared with another CTA");
  if (m.co)
    emu::coTake(m, c, sm, epoch, count);
  if (bypass != (static_cast<unsigned>(slot) < k.bypass_ctas_per_sm))
    return m.fail(where + ": bypass tag does not follow the slot");
  c.working = true;
  c.tag = bypass;
  c.decided_seq = ++m.seq;
  c.decided_epoch = epoch;
  c.decided_slot_epoch = c.tail().slot_epoch;

  // Once the SM has settled (every CTA holding a slot on it took its last
  // chunk under this epoch, after the last slot release anywhere that it
  // has acted on and after the last hole opened on this SM), slots are
  // dense: exactly min(bypass, CTAs) CTAs are tagged.
  const unsigned slot_epoch = m.state.knobs.slot_epoch;
  unsigned holders = 0, tagged = 0, word = 0;
  for (const auto &o : m.resident) {
    if (o->sm != c.sm || o->slot < 0)
      continue;
    if (!o->working || o->decided_epoch != epoch ||
        o->decided_slot_epoch != slot_epoch ||
        o->decided_seq < m.slot_moved[sm])
      return;
    ++holders;
    tagged += o->tag;
    word |= 1u << o->slot;
  }
  ++m.report->bypass_checks;
  const unsigned want = std::min(k.bypass_ctas_per_sm, holders);
  if (tagged != want || word != detail::lowBits(holders))
    return m.fail("settled SM " + std::to_string(sm) + " (epoch " +
                  std::to_string(epoch) + "): " + std::to_string(holders) +
                  " CTAs in slots 0x" + [&] {
                    char b[16];
                    std::snprintf(b, sizeof b, "%x", word);
                    return std::string(b);
                  }() + ", " + std::to_string(tagged) + " tagged, want " +
                  std::to_string(want) + " (bypass " +
                  std::to_string(k.bypass_ctas_per_sm) + ")");
}

} // namespace emulation
} // namespace detail
} // namespace smpart
