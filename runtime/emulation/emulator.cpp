// CPU emulation of transformed kernels (test support). See emulator.hpp.
//
// Threads are ucontext fibers run by the calling OS thread: a fiber runs
// until it reaches a barrier, a warp collective, a logical-block boundary
// (the blockBoundary() hook at the top of Cta::next()) or its end. A CTA
// advances by running its ready fibers; a barrier opens when every live
// thread of the CTA waits at one. The scheduler runs one CTA at a time from
// one block boundary to the next, which is what makes `__shared__` as
// static storage and unlocked atomics correct, and makes every schedule a
// pure function of the seed.
#include "smpart_emu/emulator.hpp"

#include "smpart/detail/emulation_hooks.hpp"
#include "smpart/detail/plan.hpp"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <algorithm>
#include <cstring>
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

enum class Wait { kReady, kBarrier, kBoundary, kWarp, kDone };

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
  unsigned sm = 0;
  uint3 phys{};
  dim3 grid;
  unsigned n = 0;
  std::unique_ptr<Fiber[]> fibers; // never moves: ucontext points into itself
  bool started = false;
  // Transformed runs: what the last decision said.
  bool working = false;
  int slot = -1;
  bool tag = false;
  unsigned long long stamp = 0;
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
  std::vector<unsigned char> dyn_smem;
  Report *report = nullptr;
  Config cfg;
  std::mt19937_64 rng;
  // Transformed runs.
  Knobs knobs{};
  State state{};
  Notices notices{};
  LaunchControl ctl{};
  std::vector<unsigned> runs;
  std::vector<std::unique_ptr<Cta>> resident, pending;
  std::vector<unsigned> hw_count;
  unsigned long long clock = 0, knob_stamp = 0;
  std::vector<unsigned long long> departed;

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
    (*m.transformed)(m.ctl);
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
/// (kBoundary) or have exited (kDone). kReady signals an error.
Wait runCta(Machine &m, Cta &c) {
  for (;;) {
    for (unsigned i = 0; i < c.n; ++i) {
      Fiber &f = c.fibers[i];
      if (f.wait != Wait::kReady)
        continue;
      threadIdx = f.tid;
      blockIdx = c.phys;
      blockDim = m.block;
      gridDim = c.grid;
      m.cta = &c;
      m.fiber = &f;
      switchTo(m.sched, f.ctx);
      if (!m.report->ok)
        return Wait::kReady;
    }
    unsigned barrier = 0, boundary = 0, warp = 0, done = 0;
    int passed = 0;
    for (unsigned i = 0; i < c.n; ++i) {
      switch (c.fibers[i].wait) {
      case Wait::kBarrier:
        ++barrier;
        passed += c.fibers[i].pred != 0;
        break;
      case Wait::kBoundary: ++boundary; break;
      case Wait::kWarp: ++warp; break;
      case Wait::kDone: ++done; break;
      case Wait::kReady: break;
      }
    }
    if (done == c.n)
      return Wait::kDone;
    if (warp) {
      if (!resolveWarps(m, c))
        return Wait::kReady;
      continue;
    }
    if (barrier + done == c.n) {
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

void relaunch(Machine &m, unsigned long long ctas) {
  const dim3 grid(static_cast<unsigned>(ctas));
  for (unsigned long long i = 0; i < ctas; ++i)
    m.pending.push_back(
        makeCta(m, make_uint3(static_cast<unsigned>(i), 0, 0), grid));
  m.report->ctas += ctas;
}

unsigned long long fillCtas(const Machine &m) {
  return detail::physicalCtas(m.cfg.num_sms, m.cfg.occupancy,
                              m.knobs.ctas_per_sm,
                              detail::loadMask(m.knobs).all(),
                              m.ctl.total_blocks);
}

void randomMask(Machine &m) {
  SmMask mask;
  if (m.uniform() < 0.3) {
    mask.set();
  } else {
    for (unsigned s = 0; s < m.cfg.num_sms; ++s)
      if (m.uniform() < 0.6)
        mask.set(s);
  }
  detail::storeMask(m.knobs, mask);
}

/// A controller's action at a random moment.
void knobAction(Machine &m) {
  Report &r = *m.report;
  switch (m.pick(6)) {
  case 0:
    randomMask(m);
    ++r.mask_changes;
    break;
  case 1:
    m.knobs.ctas_per_sm = m.uniform() < 0.05 ? 0 : 1 + m.pick(m.cfg.occupancy);
    break;
  case 2:
    m.knobs.bypass_ctas_per_sm = m.pick(m.cfg.occupancy + 1);
    break;
  case 3:
    if (!m.knobs.preempt) {
      m.knobs.preempt = 1;
      ++r.preemptions;
    }
    break;
  case 4: // resume while preempted CTAs may still be draining
    if (m.knobs.preempt && !m.notices.last_block_taken) {
      m.knobs.preempt = 0;
      relaunch(m, fillCtas(m));
      ++r.resumes;
    }
    break;
  case 5: // a controller grows a kernel only while blocks remain to take
    if (!m.knobs.preempt && !m.notices.last_block_taken &&
        m.pending.size() < m.cfg.num_sms * m.cfg.occupancy) {
      relaunch(m, 1 + m.pick(m.cfg.num_sms * m.cfg.occupancy));
      ++r.grows;
    }
    break;
  }
  m.knob_stamp = ++m.clock;
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
      return m.fail("SM " + std::to_string(s) + " still has slots held");
  if (m.state.resident_ctas)
    return m.fail("resident_ctas not back to 0");
  if (!m.notices.last_block_taken)
    return m.fail("the last-block notification never fired");
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
  m.dyn_smem.assign(dynamic_smem + 16, 0);
  g_m = &m;
  for (unsigned z = 0; z < grid.z && report.ok; ++z)
    for (unsigned y = 0; y < grid.y && report.ok; ++y)
      for (unsigned x = 0; x < grid.x && report.ok; ++x) {
        std::unique_ptr<Cta> c = makeCta(m, make_uint3(x, y, z), grid);
        const Wait w = runCta(m, *c);
        if (w == Wait::kBoundary)
          m.fail("original kernel reached a logical-block boundary");
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
  m.rng.seed(config.seed);
  m.block = block;
  m.threads = block.x * block.y * block.z;
  m.transformed = &body;
  m.report = &report;
  m.dyn_smem.assign(config.dynamic_smem + 16, 0);
  m.hw_count.assign(config.num_sms, 0);
  m.departed.assign(kMaxSms, 0);
  detail::initKnobs(m.knobs, config.occupancy);
  m.ctl.knobs = &m.knobs;
  m.ctl.state = &m.state;
  m.ctl.notices = &m.notices;
  m.ctl.grid_x = grid.x;
  m.ctl.grid_y = grid.y;
  m.ctl.grid_z = grid.z;
  m.ctl.total_blocks = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  m.runs.assign(m.ctl.total_blocks, 0);
  g_m = &m;
  if (config.chaos && m.uniform() < 0.5)
    randomMask(m); // sometimes launch already confined
  relaunch(m, fillCtas(m));
  const unsigned long long limit = 200000;
  unsigned idle_resumes = 0;
  unsigned long long last_done = 0;
  while (report.ok) {
    place(m);
    if (m.resident.empty()) {
      if (m.pending.empty() && m.state.blocks_done == m.ctl.total_blocks)
        break;
      if (++idle_resumes > 1000) {
        m.fail("the kernel makes no progress: 1000 relaunches in a row "
               "left without finishing a logical block");
        break;
      }
      // Every CTA left with work remaining: the controller resumes, with
      // at least one usable SM and slot.
      m.knobs.preempt = 0;
      SmMask mask = detail::loadMask(m.knobs);
      if ((mask & smRange(0, config.num_sms)).none())
        m.knobs.sm_mask[0] |= 1u << m.pick(std::min(config.num_sms, 32u));
      if (m.knobs.ctas_per_sm == 0)
        m.knobs.ctas_per_sm = 1;
      m.knob_stamp = ++m.clock;
      relaunch(m, fillCtas(m));
      ++report.resumes;
      continue;
    }
    if (m.state.blocks_done != last_done) {
      last_done = m.state.blocks_done;
      idle_resumes = 0;
    }
    if (++report.steps > limit) {
      m.fail("no completion after " + std::to_string(limit) + " steps (" +
             std::to_string(m.state.blocks_done) + " of " +
             std::to_string(m.ctl.total_blocks) + " blocks done, " +
             std::to_string(m.resident.size()) + " CTAs resident, " +
             std::to_string(m.pending.size()) + " pending, ctas/SM " +
             std::to_string(m.knobs.ctas_per_sm) + ", preempt " +
             std::to_string(m.knobs.preempt) + ", mask word " +
             std::to_string(m.knobs.sm_mask[0]) + ", next_block " +
             std::to_string(m.state.next_block) + ")");
      break;
    }
    if (config.chaos && m.uniform() < config.knob_rate) {
      knobAction(m);
      continue;
    }
    const unsigned i = m.pick(static_cast<unsigned>(m.resident.size()));
    Cta &c = *m.resident[i];
    for (unsigned t = 0; t < c.n; ++t)
      if (c.fibers[t].wait == Wait::kBoundary)
        c.fibers[t].wait = Wait::kReady;
    const Wait w = runCta(m, c);
    if (w == Wait::kReady)
      break;
    if (w == Wait::kDone) {
      --m.hw_count[c.sm];
      retire(c);
      m.resident[i] = std::move(m.resident.back());
      m.resident.pop_back();
    }
  }
  if (report.ok)
    finalChecks(m);
  for (auto &c : m.resident)
    retire(*c);
  for (auto &c : m.pending)
    retire(*c);
  g_m = nullptr;
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
void *dynamicSmem() { return g_m->dyn_smem.data(); }
} // namespace rt

} // namespace emu

namespace detail {
namespace emulation {

unsigned smid() { return emu::g_m->cta->sm; }

void blockBoundary() {
  if (!emu::g_m->transformed) {
    emu::g_m->fail("blockBoundary() in an original kernel");
    return;
  }
  emu::yieldFiber(emu::Wait::kBoundary);
}

void recordLoad(bool bypass) {
  emu::Machine &m = *emu::g_m;
  ++m.report->loads;
  m.report->tagged_loads += bypass;
  if (m.transformed && bypass != m.cta->tag)
    m.fail("a load's bypass flag differs from its CTA's tag");
}

void decided(unsigned sm, int slot, int go, unsigned bx, unsigned by,
             unsigned bz, int bypass) {
  emu::Machine &m = *emu::g_m;
  emu::Cta &c = *m.cta;
  const unsigned long long now = ++m.clock;
  if (sm != c.sm)
    return m.fail("decision names SM " + std::to_string(sm) +
                  " but the CTA runs on SM " + std::to_string(c.sm));
  if (!go) {
    if (slot != -1)
      return m.fail("a leaving CTA still holds slot " + std::to_string(slot));
    if (c.working || c.slot >= 0)
      m.departed[sm] = now;
    c.working = false;
    c.slot = -1;
    c.tag = false;
    return;
  }
  const std::string where = "CTA on SM " + std::to_string(sm) + " slot " +
                            std::to_string(slot);
  if (!((m.knobs.sm_mask[sm / 32] >> (sm % 32)) & 1u))
    return m.fail(where + " took a block while its SM is outside the mask");
  if (m.knobs.preempt)
    return m.fail(where + " took a block while preempted");
  if (slot < 0 || static_cast<unsigned>(slot) >= m.knobs.ctas_per_sm)
    return m.fail(where + " took a block with the target at " +
                  std::to_string(m.knobs.ctas_per_sm) + " CTAs per SM");
  if (!((m.state.sm_slots[sm] >> slot) & 1u))
    return m.fail(where + ": slot bit not set in the SM's slot word");
  if (c.slot >= 0 && c.slot != slot)
    m.departed[sm] = now; // compaction moved it: a slot changed hands
  const bool tag = static_cast<unsigned>(slot) < m.knobs.bypass_ctas_per_sm;
  if ((bypass != 0) != tag)
    return m.fail(where + ": bypass tag does not follow the slot");
  c.working = true;
  c.slot = slot;
  c.tag = tag;
  c.stamp = now;
  const unsigned long long b = emu::blockId(m, bx, by, bz);
  if (bx >= m.ctl.grid_x || by >= m.ctl.grid_y || bz >= m.ctl.grid_z)
    return m.fail("logical block outside the grid");
  if (++m.runs[b] > 1)
    return m.fail("logical block " + std::to_string(b) + " taken twice");

  // CTAs working on this SM: distinct slots, within the target, and once
  // settled (each decided after the last knob change and the last
  // departure on this SM) exactly min(bypass, CTAs) tagged.
  unsigned fresh = 0, working = 0, tagged = 0;
  bool settled = true;
  for (const auto &o : m.resident) {
    if (o->sm != sm || !o->working)
      continue;
    if (o.get() != &c && o->slot == slot)
      return m.fail(where + " shared with another CTA");
    ++working;
    tagged += o->tag;
    if (o->stamp > m.knob_stamp)
      ++fresh;
    if (o->stamp <= std::max(m.knob_stamp, m.departed[sm]))
      settled = false;
  }
  if (fresh > m.knobs.ctas_per_sm)
    return m.fail(std::to_string(fresh) + " CTAs work on SM " +
                  std::to_string(sm) + " under a target of " +
                  std::to_string(m.knobs.ctas_per_sm));
  if (settled) {
    ++m.report->bypass_checks;
    const unsigned want = std::min(m.knobs.bypass_ctas_per_sm, working);
    if (tagged != want)
      return m.fail(std::to_string(tagged) + " tagged CTAs on SM " +
                    std::to_string(sm) + ", want " + std::to_string(want) +
                    " (bypass " + std::to_string(m.knobs.bypass_ctas_per_sm) +
                    ", " + std::to_string(working) + " CTAs)");
  }
}

} // namespace emulation
} // namespace detail
} // namespace smpart
