// Threads as fibers (test support; see machine.hpp for the other parts).
//
// Threads are fibers run by the calling OS thread: a fiber runs until it
// reaches a barrier, a warp collective, a logical-block boundary (the
// blockBoundary() hook at the top of Cta::next()), a protocol step (thread
// 0 inside the protocol: step(), around every access to shared state) or
// its end. A CTA advances by running its ready fibers; a barrier opens when
// every live thread of the CTA waits at one; a warp collective resolves
// when every live lane of the warp reached it.
#include "machine.hpp"

#include "smpart_emu/cuda_emu.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

// The execution built-ins of the current thread (cuda_emu.hpp), set by
// runCta before it switches to a fiber.
uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace smpart {
namespace emu {
namespace internal {

// The current launch (machine.hpp): set by CurrentMachine.
Machine *g_m = nullptr;

namespace {

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
#endif

constexpr std::size_t kStackBytes = 96 * 1024;

/// Stacks of retired fibers, reused by later CTAs (of any run).
std::vector<char *> &stackPool() {
  static std::vector<char *> pool;
  return pool;
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
  auto top = reinterpret_cast<std::uintptr_t>(f.stack + kStackBytes) &
             ~std::uintptr_t{15};
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
             "warp " +
             std::to_string(w));
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

} // namespace

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
      case Wait::kBoundary:
        ++boundary;
        break;
      case Wait::kStep:
        ++step;
        break;
      case Wait::kWarp:
        ++warp;
        break;
      case Wait::kDone:
        ++done;
        break;
      case Wait::kReady:
        break;
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

} // namespace internal

// The CUDA built-ins that need the current thread (cuda_emu.hpp).
namespace rt {
using internal::Fiber;
using internal::g_m;
using internal::Wait;
using internal::yieldFiber;

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
} // namespace smpart
