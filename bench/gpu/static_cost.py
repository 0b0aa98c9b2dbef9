#!/usr/bin/env python3
"""Static cost of the persistent-thread protocol, per kernel (no GPU needed).

  bench/gpu/static_cost.py [--build build] [--runtime-include runtime/include]
                           [--rewritten DIR] [--json out.json]

Compiles every test_inputs/ kernel before (test_inputs/*.cu) and after the
rewrite (<build>/test_inputs/smpart/*.cu, compiled against
--runtime-include) to PTX for sm_90 with -lineinfo and prints, per kernel:

  t0/chunk   PTX instructions of protocol code thread 0 executes per chunk of
             logical blocks in the steady state (decision path: knobs
             unchanged, no poll due, a chunk taken)
  oth/chunk  the same for any other thread (it follows thread 0's decision)
  /block     protocol instructions every thread executes per logical block
             inside a chunk (no decision)
  gld atom bar fnc host
             per chunk, by thread 0: global loads (cp.async included),
             atomics (atom/red), barriers, fences (membar/fence), accesses
             to host-mapped memory (the LaunchControl::knobs and ::notices
             pointers)
  tagbr      static count of tagged loads that keep a run-time branch of
             their own between ld.global.cg and the plain load (a loop of
             them, which nvcc then issues one at a time, is written once
             per tag by the tool where it can be; what remains is mostly
             straight-line loads, one branch per block)
  regs, spill, occ (resident CTAs per SM), margin (registers per thread that
             could be added before occ drops), from ptxas -v; and the
             original kernel's static PTX instruction count, for scale.

Method. Nothing is matched against the protocol's function names or its
branch conditions, so the report survives a rewrite of device.cuh:

* Which code is protocol: every PTX instruction carries a `.loc` (file,
  line) and its inlining chain (`inlined_at`); an instruction is protocol
  when a file of that chain is under --runtime-include (so an atomicCAS
  from a CUDA header that device.cuh calls is protocol, one the body calls
  is not), the rest is the user's body (the rewriter maps it back to
  test_inputs/ with #line).
* Which path is the steady state: the script executes the rewritten
  kernel's PTX for thread 0 and thread 1 of one CTA with a small PTX
  interpreter (threads meet at bar.sync), from kernel entry, against a
  fabricated launch: host knobs at their defaults with a published epoch,
  device state all zero (the protocol copies the knobs in itself, as at any
  epoch change), a huge logical grid, every user parameter zero (bodies take
  their bounds-check exit, loops run zero times), 16 KiB of user dynamic
  shared memory in front of the protocol's tail, and a frozen
  %globaltimer. A frozen clock means: after the first poll no further poll
  is ever due, every chunk looks short, so the chunk size grows to its cap
  and stays there; knobs never change. The trace is cut into logical
  blocks (a block starts at the first user instruction after a protocol
  barrier); a chunk is a block where thread 0 runs a protocol atomic. Over
  the last full chunk period of K blocks, per-block cost = the most common
  block's protocol count and per-chunk cost = period total - (K-1) x
  per-block cost, so it does not matter where the compiler put the
  decision's instructions. The script checks that the last two periods
  cost the same (else it says "not steady").
* Only what the launch needs is taken from the headers, by compiling a few
  lines of C++ against --runtime-include with g++: the offsets of
  LaunchControl's fields, kTailBytes, and the host-mapped knobs at their
  defaults (the epoch-tagged KnobImage, or the older plain Knobs struct;
  a third encoding needs a third entry in HOST_IMAGES).

Limits. PTX, not SASS: ptxas schedules, folds and expands (64-bit division
becomes a call-free sequence of dozens of SASS instructions), so counts are
of virtual instructions, comparable before/after and across kernels but
not cycles. One path only: the zero-data bodies skip most of the user's
code, so protocol code inlined into the body (smpart::load's bypass
select, smpart::blockIdx() in helpers) is counted only where the early
exit reaches it; the original's size is static (all its instructions once),
not a per-block dynamic count. Occupancy assumes the block size of
__launch_bounds__ (.maxntid) or --block (256), no user dynamic shared
memory, and adds the protocol's tail (kTailBytes) to rewritten
kernels; a rewritten kernel is taken at its original's block size.
Kernels nvcc cannot compile (static member kernels) are absent.
"""
import argparse
import json
import math
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# Registers, stack and spills as ptxas reports them: one parser for both
# cost reports.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from resource_usage import demangle, parse_resource_usage  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]

# sm_90 limits for the occupancy estimate.
SM_REGS, SM_THREADS, SM_CTAS = 65536, 2048, 32
SM_SMEM, CTA_SMEM_RESERVED = 228 * 1024, 1024
REG_ALLOC_UNIT = 256  # registers per warp are allocated in these units

# Fabricated launch. Addresses only need to be distinct: host-mapped
# memory gets its own ranges so accesses to it are recognised by address.
STATE_BASE = 0x2000_0000
HOST_KNOBS = 0x7000_0000_0000
HOST_NOTICES = 0x7100_0000_0000
HOST_SPAN = 0x10_0000
SHARED_WIN = 0x5000_0000_0000  # generic window of shared memory
LOCAL_WIN = 0x5100_0000_0000   # generic window of local memory
TIMER_NS = 10**12
# Dynamic shared memory the simulated launch gives the user (extern
# __shared__ arrays), in front of the protocol's tail.
USER_DYN_SMEM = 16 * 1024
NCTAID = 132
LOGICAL_BLOCKS = 1 << 30
MAX_STEPS = 4_000_000

# ---------------------------------------------------------------- PTX parse

LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
FILE = re.compile(r'\.file\s+(\d+)\s+"([^"]+)"')
ENTRY = re.compile(r"\.entry\s+(\S+)\s*\(")
PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(\w+)(?:\[(\d+)\])?")
SHARED = re.compile(r"^\s*(?:\.extern\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(\w+)(?:\[(\d*)\])?")
MAXNTID = re.compile(r"\.(?:maxntid|reqntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


class Kernel:
    def __init__(self, name):
        self.name = name
        self.params = []   # (name, bytes)
        self.insts = []    # (pred, negate, opcode, operands, protocol)
        self.labels = {}
        self.block = None  # from .maxntid/.reqntid


def split_operands(text):
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


def type_size(t):
    return {"pred": 1}.get(t, max(1, int(re.sub(r"\D", "", t) or 32) // 8))


def parse_ptx(text, protocol_dirs):
    """Kernels of a PTX module; each instruction tagged protocol or user by
    the file of its innermost .loc."""
    files, kernels, shared = {}, {}, []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := FILE.search(line):
            path = os.path.realpath(m.group(2))
            files[m.group(1)] = any(path.startswith(d + os.sep) for d in protocol_dirs)
        elif (m := SHARED.match(line)) and "{" not in line:
            shared.append((m.group(3), int(m.group(1) or 1),
                           None if m.group(4) == "" else type_size(m.group(2)) * int(m.group(4) or 1)))
        elif m := ENTRY.search(line):
            k = Kernel(m.group(1))
            i += 1
            while "{" not in lines[i] or lines[i].strip().startswith(".param"):
                if pm := PARAM.search(lines[i]):
                    k.params.append((pm.group(3), type_size(pm.group(2)) * int(pm.group(4) or 1)))
                if mm := MAXNTID.search(lines[i]):
                    k.block = math.prod(int(g) for g in mm.groups() if g)
                i += 1
            # Each instruction gets the files of its whole inlining chain:
            # an atomicCAS from a CUDA header called by device.cuh is
            # protocol, one called by the user's body is not.
            depth, chain, chains = 0, frozenset(), {}
            while True:
                raw = lines[i].split("//")[0].strip()
                depth += raw.count("{") - raw.count("}")
                i += 1
                if depth == 0:
                    break
                if lm := LOC.match(raw):
                    # File ids only: the .file table comes after the code.
                    here, parent = lm.group(1, 2, 3), lm.group(4, 5, 6)
                    chain = frozenset({here[0]})
                    if parent[0]:
                        chain |= chains.get(parent, frozenset({parent[0]}))
                    chains[here] = chain
                    continue
                if sm := SHARED.match(raw):
                    shared.append((sm.group(3), int(sm.group(1) or 1),
                                   None if sm.group(4) == "" else
                                   type_size(sm.group(2)) * int(sm.group(4) or 1)))
                    continue
                raw = raw.strip("{} ")
                if not raw or raw.startswith("."):
                    continue
                if raw.endswith(":"):
                    k.labels[raw[:-1]] = len(k.insts)
                    continue
                pred, neg = None, False
                if raw.startswith("@"):
                    p, raw = raw.split(None, 1)
                    neg = p.startswith("@!")
                    pred = p.lstrip("@!")
                raw = raw.rstrip(";").strip()
                op, _, rest = raw.partition(" ")
                k.insts.append((pred, neg, op, split_operands(rest), chain))
            kernels[k.name] = k
            continue
        i += 1
    for k in kernels.values():
        k.insts = [(*inst[:4], any(files.get(f, False) for f in inst[4])) for inst in k.insts]
    return kernels, shared


# ------------------------------------------------------------- interpreter

class Unsupported(Exception):
    pass


def to_float(bits, w):
    return struct.unpack("<d" if w == 64 else "<f",
                         bits.to_bytes(8 if w == 64 else 4, "little"))[0]


def from_float(x, w):
    try:
        return int.from_bytes(struct.pack("<d" if w == 64 else "<f", x), "little")
    except (OverflowError, struct.error):
        return 0x7FC00000 if w == 32 else 0x7FF8000000000000


def signed(v, w):
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


class Machine:
    """One CTA, two simulated threads (0 and 1), PTX semantics for the
    integer, predicate, memory and control instructions the protocol uses;
    float arithmetic is approximate (only the user's body uses it)."""

    def __init__(self, kernel, shared_syms, params, block, dyn_smem):
        self.k = kernel
        self.mem = {"global": {}, "shared": {}, "local": {}}
        self.params = params  # param symbol -> bytes
        self.block = block
        self.dyn_smem = dyn_smem
        self.sym = {}
        # Static shared variables first, then the dynamic shared memory,
        # which every `extern .shared` array names (size None).
        off = 0
        for name, align, size in shared_syms:
            if size is not None:
                off = -(-off // 16) * 16
                self.sym[name] = off
                off += size
        self.dyn_base = -(-off // 16) * 16
        for name, align, size in shared_syms:
            if size is None:
                self.sym[name] = self.dyn_base
        self.dyn_size = dyn_smem

    # memory
    def space_of(self, space, addr):
        if space in ("shared", "local", "global", "param"):
            return space, addr
        if SHARED_WIN <= addr < SHARED_WIN + (1 << 32):
            return "shared", addr - SHARED_WIN
        if LOCAL_WIN <= addr < LOCAL_WIN + (1 << 32):
            return "local", addr - LOCAL_WIN
        return "global", addr

    def load(self, space, addr, n, tid):
        if space == "param":
            name, off = addr
            return int.from_bytes(self.params.get(name, b"")[off:off + n].ljust(n, b"\0"), "little")
        m = self.mem[space] if space != "local" else self.mem["local"].setdefault(tid, {})
        return int.from_bytes(bytes(m.get(addr + j, 0) for j in range(n)), "little")

    def store(self, space, addr, n, value, tid):
        m = self.mem[space] if space != "local" else self.mem["local"].setdefault(tid, {})
        for j in range(n):
            m[addr + j] = (value >> (8 * j)) & 0xFF


class Thread:
    def __init__(self, machine, tid):
        self.m, self.tid = machine, tid
        self.regs = {}
        self.pc = 0
        self.done = False
        self.trace = []  # per executed instruction: (protocol, category)

    def special(self, name):
        m = self.m
        table = {
            "%tid.x": self.tid, "%tid.y": 0, "%tid.z": 0,
            "%ntid.x": m.block, "%ntid.y": 1, "%ntid.z": 1,
            "%ctaid.x": 0, "%ctaid.y": 0, "%ctaid.z": 0,
            "%nctaid.x": NCTAID, "%nctaid.y": 1, "%nctaid.z": 1,
            "%smid": 0, "%nsmid": NCTAID, "%laneid": self.tid % 32,
            "%warpid": self.tid // 32, "%globaltimer": TIMER_NS,
            "%dynamic_smem_size": m.dyn_size, "%total_smem_size": m.dyn_base + m.dyn_size,
            "%clock": len(self.trace), "%clock64": len(self.trace),
            "%lanemask_eq": 1 << (self.tid % 32), "%lanemask_lt": (1 << (self.tid % 32)) - 1,
        }
        if name in table:
            return table[name]
        raise Unsupported(f"special register {name}")

    def val(self, op, w=64):
        op = op.strip()
        if op.startswith("%"):
            if op in self.regs:
                return self.regs[op]
            if "." in op or op in ("%smid", "%nsmid", "%laneid", "%warpid", "%globaltimer",
                                   "%clock", "%clock64", "%dynamic_smem_size",
                                   "%total_smem_size") or op.startswith("%lanemask"):
                try:
                    return self.special(op)
                except Unsupported:
                    pass
            return 0
        if op.startswith("!"):
            return 1 - self.val(op[1:], w)
        if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", op) or re.fullmatch(r"0[dD][0-9a-fA-F]{16}", op):
            return int(op[2:], 16)
        if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)U?", op):
            return int(op.rstrip("U"), 0) & ((1 << w) - 1)
        if op in self.m.sym:
            return self.m.sym[op]
        if op in self.m.k.labels:
            return self.m.k.labels[op]
        raise Unsupported(f"operand {op}")

    def set(self, op, v, w):
        self.regs[op.strip()] = int(v) & ((1 << w) - 1)

    def address(self, op):
        inner = op.strip()[1:-1].replace(" ", "")
        base, sign, off = re.match(r"([^+-]+)([+-]?)(.*)", inner).groups()
        offset = int(off, 0) * (-1 if sign == "-" else 1) if off else 0
        if base.startswith("%"):
            return self.val(base) + offset, None
        if base in self.m.params:
            return None, (base, offset)
        if base in self.m.sym:
            return self.m.sym[base] + offset, None
        try:
            return int(base, 0) + offset, None
        except ValueError:
            raise Unsupported(f"address {op}")

    def step(self):
        """Executes one instruction; returns 'bar' at a barrier, 'exit' at
        the end, None otherwise."""
        k = self.m.k
        if self.pc >= len(k.insts):
            self.done = True
            return "exit"
        pred, neg, op, ops, protocol = k.insts[self.pc]
        self.pc += 1
        parts = op.split(".")
        base = parts[0]
        cat = None
        if pred is not None and (self.val(pred) == 1) == neg:
            self.trace.append((protocol, None))
            return None
        try:
            cat = self.execute(base, parts, ops)
        except (Unsupported, KeyError, ValueError, ZeroDivisionError, AttributeError) as e:
            if protocol:
                raise Unsupported(f"{op} {', '.join(ops)}: {e}")
            # The user's body: an approximate result keeps it going.
            if ops and not ops[0].startswith("["):
                for d in ops[0].strip("{}").split(","):
                    if d.strip().startswith("%"):
                        self.set(d, 0, 64)
        self.trace.append((protocol, cat))
        if base in ("bar", "barrier") and "warp" not in parts:
            return "bar"
        if base in ("ret", "exit"):
            self.done = True
            return "exit"
        return None

    def execute(self, base, parts, ops):
        types = [p for p in parts if re.fullmatch(r"[usbf](8|16|32|64)|pred", p)]
        t = types[-1] if types else "b32"
        w = 1 if t == "pred" else int(t[1:])
        sgn = t.startswith("s")
        fl = t.startswith("f")
        mask = (1 << w) - 1 if w > 1 else 1
        v = lambda o, ww=w: self.val(o, ww)
        if base == "mov":
            if ops[0].startswith("{"):  # unpack
                dst = ops[0].strip("{}").split(",")
                x, n = v(ops[1]), w // len(dst)
                for j, d in enumerate(dst):
                    self.set(d, x >> (n * j), n)
            elif ops[1].startswith("{"):  # pack
                src = ops[1].strip("{}").split(",")
                n, x = w // len(src), 0
                for j, s in enumerate(src):
                    x |= (v(s) & ((1 << n) - 1)) << (n * j)
                self.set(ops[0], x, w)
            else:
                self.set(ops[0], v(ops[1]), w)
            return None
        if base in ("ld", "st", "atom", "red"):
            return self.memory(base, parts, ops, w)
        if base == "cp" and "async" in parts:
            # cp.async: copied at once (only wait_group makes it visible, and
            # the copy's source does not change meanwhile here); a global load.
            if len(ops) < 3:
                return None  # commit_group / wait_group / wait_all
            dst, _ = self.address(ops[0])
            src, _ = self.address(ops[1])
            n = self.val(ops[2], 32)
            keep = self.val(ops[3], 32) if len(ops) > 3 else n
            sspace, src = self.m.space_of("global", src)
            data = self.m.load(sspace, src, keep, self.tid) if keep else 0
            self.m.store("shared", dst, n, data, self.tid)
            host = any(h <= src < h + HOST_SPAN for h in (HOST_KNOBS, HOST_NOTICES))
            return "host" if host else "gld"
        if base in ("bar", "barrier"):
            return "bar"
        if base in ("membar", "fence"):
            return "fence"
        if base in ("nanosleep", "bra", "ret", "exit", "prefetch", "prefetchu"):
            if base == "bra":
                self.pc = self.m.k.labels[ops[0]]
            return None
        if base == "cvta":
            x = v(ops[1], 64)
            if "to" in parts:
                x -= SHARED_WIN if "shared" in parts else LOCAL_WIN if "local" in parts else 0
            else:
                x += SHARED_WIN if "shared" in parts else LOCAL_WIN if "local" in parts else 0
            self.set(ops[0], x, 64)
            return None
        if base == "setp":
            cmp_ = parts[1]
            a, b = v(ops[1]), v(ops[2])
            if fl:
                a, b = to_float(a, w), to_float(b, w)
            elif sgn:
                a, b = signed(a, w), signed(b, w)
            nan = fl and (a != a or b != b)
            r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                 "ge": a >= b, "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b,
                 "equ": nan or a == b, "neu": nan or a != b, "ltu": nan or a < b,
                 "leu": nan or a <= b, "gtu": nan or a > b, "geu": nan or a >= b,
                 "num": not nan, "nan": nan}[cmp_]
            if fl and nan and cmp_ in ("eq", "lt", "le", "gt", "ge", "ne"):
                r = False
            if len(parts) > 3 and parts[2] in ("and", "or", "xor"):
                c = v(ops[3])
                r = {"and": r and c, "or": r or c, "xor": bool(r) != bool(c)}[parts[2]]
            dst = ops[0].split("|")
            self.set(dst[0], r, 1)
            if len(dst) > 1:
                self.set(dst[1], not r, 1)
            return None
        if base == "selp":
            self.set(ops[0], v(ops[1]) if v(ops[3]) else v(ops[2]), w)
            return None
        if base == "cvt":
            dt, st = types[0], types[1]
            dw, sw = int(dt[1:]), int(st[1:])
            x = v(ops[1], sw)
            if st[0] == "f" and dt[0] == "f":
                r = from_float(to_float(x, sw), dw)
            elif st[0] == "f":
                f = to_float(x, sw)
                r = 0 if f != f or abs(f) == float("inf") else int(f)
            elif dt[0] == "f":
                r = from_float(float(signed(x, sw) if st[0] == "s" else x), dw)
            else:
                r = signed(x, sw) if st[0] == "s" else x & ((1 << sw) - 1)
            self.set(ops[0], r, dw)
            return None
        if fl:
            return self.float_op(base, parts, ops, w)
        a = v(ops[1]) if len(ops) > 1 else 0
        b = v(ops[2]) if len(ops) > 2 else 0
        sa, sb = (signed(a, w), signed(b, w)) if sgn else (a, b)
        if base in ("and", "or", "xor"):
            r = {"and": a & b, "or": a | b, "xor": a ^ b}[base]
        elif base == "not":
            r = ~a
        elif base == "cnot":
            r = 1 if a == 0 else 0
        elif base == "neg":
            r = -a
        elif base == "abs":
            r = abs(signed(a, w))
        elif base == "add":
            r = a + b
        elif base == "sub":
            r = a - b
        elif base in ("mul", "mad"):
            sa, sb = (signed(a, w), signed(b, w)) if sgn else (a, b)
            prod = sa * sb
            if "wide" in parts:
                ww = 2 * w
                r = prod + (v(ops[3], ww) if base == "mad" else 0)
                self.set(ops[0], r, ww)
                return None
            r = (prod >> w) if "hi" in parts else prod
            if base == "mad":
                r += v(ops[3])
        elif base in ("div", "rem"):
            if sb == 0:
                r = 0
            elif base == "div":
                r = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
            else:
                r = sa - sb * (abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1))
        elif base in ("min", "max"):
            r = (min if base == "min" else max)(sa, sb)
        elif base == "shl":
            r = a << min(b, w)
        elif base == "shr":
            r = (sa >> min(b, w)) if sgn else (a >> min(b, w))
        elif base == "shf":
            n = (v(ops[3], 32) & 31) if "wrap" in parts else min(v(ops[3], 32), 32)
            both = (b << 32) | a
            r = ((both << n) >> 32) if "l" in parts else (both >> n)
        elif base == "popc":
            r = bin(a).count("1")
        elif base == "clz":
            r = w - a.bit_length()
        elif base == "brev":
            r = int(format(a, f"0{w}b")[::-1], 2)
        elif base == "bfind":
            x = sa if sgn and sa < 0 else a
            if sgn and sa < 0:
                x = ~sa
            pos = x.bit_length() - 1
            r = mask if pos < 0 else ((w - 1 - pos) if "shiftamt" in parts else pos)
        elif base == "bfi":
            pos, ln = v(ops[3], 32) & 0xFF, v(ops[4], 32) & 0xFF
            fm = ((1 << ln) - 1) << pos
            r = (b & ~fm) | ((a << pos) & fm)
        elif base == "bfe":
            pos, ln = b & 0xFF, v(ops[3], 32) & 0xFF
            r = (a >> pos) & ((1 << ln) - 1)
            if sgn and ln and (r >> (ln - 1)) & 1:
                r -= 1 << ln
        else:
            raise Unsupported(base)
        self.set(ops[0], r, w)
        return None

    def float_op(self, base, parts, ops, w):
        f = [to_float(self.val(o, w), w) for o in ops[1:]]
        try:
            r = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1],
                 "mul": lambda: f[0] * f[1], "fma": lambda: f[0] * f[1] + f[2],
                 "mad": lambda: f[0] * f[1] + f[2], "div": lambda: f[0] / f[1],
                 "neg": lambda: -f[0], "abs": lambda: abs(f[0]),
                 "min": lambda: min(f[0], f[1]), "max": lambda: max(f[0], f[1]),
                 "sqrt": lambda: math.sqrt(f[0]), "rsqrt": lambda: 1 / math.sqrt(f[0]),
                 "rcp": lambda: 1 / f[0], "ex2": lambda: 2 ** f[0],
                 "lg2": lambda: math.log2(f[0]), "sin": lambda: math.sin(f[0]),
                 "cos": lambda: math.cos(f[0])}[base]()
        except (ZeroDivisionError, ValueError, OverflowError):
            r = float("nan")
        self.set(ops[0], from_float(r, w), w)
        return None

    def memory(self, base, parts, ops, w):
        space = next((p for p in parts if p in ("global", "shared", "local", "param")), None)
        vec = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
        n = w // 8
        if base == "red":
            addr_op, srcs, dst = ops[0], ops[1:], None
        elif base == "st":
            addr_op, srcs, dst = ops[0], [ops[1]], None
        else:
            addr_op, srcs, dst = ops[1], ops[2:], ops[0]
        addr, param = self.address(addr_op)
        if param is not None:
            space, addr = "param", param
        else:
            space, addr = self.m.space_of(space, addr)
        host = space == "global" and any(h <= addr < h + HOST_SPAN for h in (HOST_KNOBS, HOST_NOTICES))
        if base == "ld":
            dsts = dst.strip("{}").split(",")
            for j, d in enumerate(dsts):
                self.set(d, self.m.load(space, (addr[0], addr[1] + j * n) if space == "param"
                                        else addr + j * n, n, self.tid), w)
            cat = "host" if host else "gld" if space == "global" else None
            return cat
        if base == "st":
            vals = srcs[0].strip("{}").split(",")
            for j, s in enumerate(vals):
                self.m.store(space, addr + j * n, n, self.val(s, w), self.tid)
            return "host" if host else None
        # atom / red
        opn = next(p for p in parts[1:] if p in ("add", "and", "or", "xor", "exch", "cas", "min",
                                                   "max", "inc", "dec"))
        old = self.m.load(space, addr, n, self.tid)
        b = self.val(srcs[0], w)
        sg = any(p.startswith("s") and p[1:].isdigit() for p in parts)
        so, sb = (signed(old, w), signed(b, w)) if sg else (old, b)
        new = {"add": lambda: old + b, "and": lambda: old & b, "or": lambda: old | b,
               "xor": lambda: old ^ b, "exch": lambda: b,
               "cas": lambda: self.val(srcs[1], w) if old == b else old,
               "min": lambda: min(so, sb), "max": lambda: max(so, sb),
               "inc": lambda: 0 if old >= b else old + 1,
               "dec": lambda: b if old == 0 or old > b else old - 1}[opn]()
        self.m.store(space, addr, n, new, self.tid)
        if dst is not None:
            self.set(dst, old, w)
        return "host" if host else "atom"


def run_cta(machine, max_steps=MAX_STEPS):
    """Runs threads 0 and 1 (they meet at every barrier) until the last two
    chunk periods cost the same; returns steady()'s figures."""
    threads = [Thread(machine, 0), Thread(machine, 1)]
    steps, barriers, last = 0, 0, None
    while not all(t.done for t in threads):
        for t in threads:
            while not t.done:
                r = t.step()
                steps += 1
                if r == "bar" or steps > max_steps:
                    break
        barriers += 1
        if steps > max_steps:
            break
        if barriers % 128 == 0:
            try:
                last = steady(threads)
            except Unsupported:
                continue
            if last["steady"]:
                return last
    if last is None:
        last = steady(threads)  # raises with the reason
    return last


# --------------------------------------------------------------- analysis

CATS = ("gld", "atom", "bar", "fence", "host")


def segments(trace):
    """Cuts a thread's trace into logical blocks: a block starts at the
    first user instruction after a protocol barrier. Returns per block a
    vector (protocol instructions, gld, atom, bar, fence, host)."""
    out, cur, seen_bar = [], None, False
    for protocol, cat in trace:
        if not protocol and seen_bar:
            if cur is not None:
                out.append(tuple(cur))
            cur = [0] * (1 + len(CATS))
            seen_bar = False
        if protocol:
            if cur is not None:
                cur[0] += 1
                if cat in CATS:
                    cur[1 + CATS.index(cat)] += 1
            if cat == "bar":
                seen_bar = True
    return out


def steady(threads):
    """Per-block and per-chunk protocol cost of the last full chunk period."""
    seg = [segments(t.trace) for t in threads]
    n = min(len(s) for s in seg)
    chunk_at = [i for i in range(n) if seg[0][i][1 + CATS.index("atom")]]
    if len(chunk_at) < 3:
        raise Unsupported(f"only {len(chunk_at)} chunks taken (does the fabricated "
                          "launch match this protocol's knob encoding?)")
    # The last chunk may be cut short by the end of the simulation.
    p0, p1, p2 = chunk_at[-3], chunk_at[-2], chunk_at[-1]
    k = p2 - p1
    res = {"chunk_blocks": k, "steady": (p1 - p0) == k}
    for name, s in zip(("t0", "other"), seg):
        period = s[p1:p2]
        prev = s[p0:p1]
        blocks = [v for j, v in enumerate(period) if j != 0]
        block = max(set(blocks), key=blocks.count) if blocks else (0,) * (1 + len(CATS))
        total = [sum(c) for c in zip(*period)]
        chunk = [t - (k - 1) * b for t, b in zip(total, block)]
        res[name] = {"block": block, "chunk": chunk}
        if [sum(c) for c in zip(*prev)] != total:
            res["steady"] = False
    return res


# ------------------------------------------------------------ compilation

def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}\n{out.stderr[-2000:]}")
    return out


def compile_ptx(nvcc, arch, src, includes, ptx):
    cmd = [nvcc, f"-arch={arch}", "-lineinfo", "-std=c++17", "-ptx", "-o", str(ptx)]
    for inc in includes:
        cmd += ["-I", str(inc)]
    run(cmd + [str(src)])
    return ptx.read_text()


def resources(ptxas, arch, ptx):
    out = run([ptxas, f"-arch={arch}", "-v", "-o", os.devnull, str(ptx)])
    return parse_resource_usage(out.stderr)


LAYOUT_MAIN = r"""
#include "smpart/control.hpp"
#include <cstdio>
#include <cstring>
#include <type_traits>
#define OFF(f) std::printf(#f " %zu\n", offsetof(smpart::LaunchControl, f));
// Fields of later protocols: the launch handshake's first_ctas.
template <class L, class = void> struct HasFirstCtas : std::false_type {};
template <class L>
struct HasFirstCtas<L, std::void_t<decltype(&L::first_ctas)>> : std::true_type {};
template <class L> void optionalFields() {
  if constexpr (HasFirstCtas<L>::value)
    std::printf("first_ctas %zu\n", offsetof(L, first_ctas));
}
int main() {
  optionalFields<smpart::LaunchControl>();
  OFF(knobs) OFF(state) OFF(notices) OFF(grid_x) OFF(grid_y) OFF(grid_z)
  OFF(generation) OFF(total_blocks) OFF(first_instance)
  std::printf("size %zu\n", sizeof(smpart::LaunchControl));
  std::printf("tail %u\n", (unsigned)smpart::kTailBytes);
  const unsigned epoch = 2, mask = ~0u, ctas = smpart::kMaxCtasPerSm, bypass = 0,
                 preempt = 0, target = smpart::kDefaultChunkTargetNs,
                 grace = smpart::kDefaultStallGraceNs;
  HOST_IMAGE
  std::printf("knobs_image ");
  for (size_t i = 0; i < sizeof k; ++i) std::printf("%02x", ((unsigned char *)&k)[i]);
  std::printf("\n");
}
"""
# The host-mapped knobs as the host writes them. Two encodings so far:
# an epoch-tagged KnobImage (every 64-bit word: value | epoch << 32) and,
# before it, the plain Knobs struct under a sequence lock. Tried in order.
HOST_IMAGES = [
    r"""smpart::KnobImage k;
  for (auto &w : k.word) w = (unsigned long long)epoch << 32;
  auto put = [&](unsigned i, unsigned v) { k.word[i] |= v; };
  for (unsigned w = 0; w < smpart::kMaskWords; ++w) put(smpart::kKnobMask + w, mask);
  put(smpart::kKnobCtasPerSm, ctas); put(smpart::kKnobBypass, bypass);
  put(smpart::kKnobPreempt, preempt); put(smpart::kKnobChunkTarget, target);
  put(smpart::kKnobStallGrace, grace);""",
    r"""smpart::Knobs k;
  std::memset(&k, 0, sizeof k);
  for (auto &w : k.sm_mask) w = mask;
  k.ctas_per_sm = ctas; k.bypass_ctas_per_sm = bypass; k.preempt = preempt;
  k.chunk_target_ns = target; k.stall_grace_ns = grace; k.epoch = epoch;""",
]


def layout(cxx, include):
    """Offsets of LaunchControl's fields, kTailBytes, and the bytes of the
    host-mapped knobs at their defaults under a published epoch, from the
    headers themselves (compiled with g++)."""
    errors = []
    with tempfile.TemporaryDirectory() as d:
        for image in HOST_IMAGES:
            (pathlib.Path(d) / "l.cpp").write_text(LAYOUT_MAIN.replace("HOST_IMAGE", image))
            try:
                run([cxx, "-std=c++17", "-I", str(include), "-o", f"{d}/l", f"{d}/l.cpp"])
            except RuntimeError as e:
                errors.append(str(e))
                continue
            lines = run([f"{d}/l"]).stdout.split("\n")
            fields = dict(line.split() for line in lines if line)
            knobs = bytes.fromhex(fields.pop("knobs_image"))
            return {k: int(v) for k, v in fields.items()}, knobs
    sys.exit("error: no known layout of LaunchControl / the host knobs in "
             f"{include}:\n" + "\n".join(errors))


def control_param(off):
    img = bytearray(off["size"])
    put = lambda f, v, n: img.__setitem__(slice(off[f], off[f] + n), v.to_bytes(n, "little"))
    put("knobs", HOST_KNOBS, 8)
    put("state", STATE_BASE, 8)
    put("notices", HOST_NOTICES, 8)
    put("grid_x", LOGICAL_BLOCKS, 4)
    put("grid_y", 1, 4)
    put("grid_z", 1, 4)
    if "first_ctas" in off:
        # The launch handshake: a zero State is older than generation 1,
        # so the first CTA initialises it.
        put("generation", 1, 4)
        put("first_ctas", 1, 4)
    else:
        put("generation", 0, 4)  # State is all zero: generation 0 matches
    put("total_blocks", LOGICAL_BLOCKS, 8)
    put("first_instance", 1, 4)
    return bytes(img)


def occupancy(regs, smem, block):
    warps = -(-block // 32)
    per_warp = -(-max(regs, 1) * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    by_regs = (SM_REGS // per_warp) // warps
    by_threads = SM_THREADS // (warps * 32)
    by_smem = SM_SMEM // (-(-smem // 128) * 128 + CTA_SMEM_RESERVED)
    return max(0, min(by_regs, by_threads, by_smem, SM_CTAS))


def margin(regs, smem, block):
    occ = occupancy(regs, smem, block)
    r = regs
    while r < 255 and occupancy(r + 1, smem, block) >= occ:
        r += 1
    return r - regs


def key(pretty):
    return pretty.replace("smpart::LaunchControl, ", "").replace("(smpart::LaunchControl)", "()")


# ------------------------------------------------------------------- main

def tag_branches(k):
    """Tagged loads with a branch of their own: smpart::load's
    `if (bypass) ld.global.cg else ld` diamond, the cg side ending in a
    jump past the plain load."""
    return sum(1 for a, b in zip(k.insts, k.insts[1:])
               if a[2].startswith("ld.global.cg") and b[2].startswith("bra")
               and b[0] is None)


def analyse(args):
    rewritten = args.rewritten or args.build / "test_inputs/smpart"
    inc = args.runtime_include.resolve()
    proto_dirs = [os.path.realpath(inc)]
    off, knobs_img = layout(args.cxx, inc)
    tail = off["tail"]  # smpart::kTailBytes: added to every rewritten launch
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for src in sorted((ROOT / "test_inputs").glob("*.cu")):
            xf = rewritten / src.name
            if not xf.exists():
                continue
            o_ptx = compile_ptx(args.nvcc, args.arch, src, [], tmp / "o.ptx")
            o_res = resources(args.ptxas, args.arch, tmp / "o.ptx")
            o_kern, _ = parse_ptx(o_ptx, proto_dirs)
            x_ptx = compile_ptx(args.nvcc, args.arch, xf, [inc], tmp / "x.ptx")
            x_res = resources(args.ptxas, args.arch, tmp / "x.ptx")
            x_kern, shared = parse_ptx(x_ptx, proto_dirs)
            names = demangle(list(o_kern) + list(x_kern))
            by_key = {key(names[n]): n for n in o_kern}
            for xn, k in x_kern.items():
                if not any(p for *_, p in k.insts):
                    continue  # not a transformed kernel
                pretty = key(names[xn])
                on = by_key.get(pretty)
                # The original's bound: the rewritten kernel may state a
                # wider one (the same register cap, LaunchBoundsEdit.h),
                # and is launched with the original's blocks.
                block = (o_kern[on].block if on else None) or k.block or args.block
                row = {"file": src.name, "kernel": pretty, "block": block}
                if on:
                    ok = o_kern[on]
                    row["orig_instrs"] = len(ok.insts)
                    r = o_res.get(on, {})
                    row["orig"] = dict(r, occ=occupancy(r.get("regs", 0), r.get("smem", 0),
                                                        block))
                r = x_res.get(xn, {})
                smem = r.get("smem", 0) + tail
                row["tag_branches"] = tag_branches(k)
                row["xf"] = dict(r, occ=occupancy(r.get("regs", 0), smem, block),
                                 margin=margin(r.get("regs", 0), smem, block))
                # The control block first; every user parameter zero.
                params = {name: bytes(size) for name, size in k.params}
                params[k.params[0][0]] = control_param(off)
                m = Machine(k, shared, params, block, USER_DYN_SMEM + tail)
                for j, byte in enumerate(knobs_img):
                    m.mem["global"][HOST_KNOBS + j] = byte
                try:
                    row["path"] = run_cta(m)
                except Unsupported as e:
                    row["error"] = str(e)
                rows.append(row)
                print(f"  {src.name}: {pretty}", file=sys.stderr)
    return rows


def report(rows, out):
    hdr = (f"{'kernel':40} {'t0/chunk':>8} {'oth/chunk':>9} {'/block':>6} {'K':>3} "
           f"{'gld':>3} {'atom':>4} {'bar':>3} {'fnc':>3} {'host':>4} {'tagbr':>5} {'regs':>9} "
           f"{'spill':>5} {'occ':>7} {'margin':>6} {'orig':>5}")
    print(hdr, file=out)
    ratios, regs, margins, dropped = [], [], [], []
    for r in rows:
        name = r["kernel"].split("(")[0][:40]
        o, x = r.get("orig", {}), r["xf"]
        regs.append(x["regs"])
        margins.append(x["margin"])
        if isinstance(o.get("occ"), int) and x["occ"] < o["occ"]:
            dropped.append(f"{name} ({o['occ']} -> {x['occ']})")
        tail = (f"{o.get('regs', '?'):>3}->{x['regs']:<3} {x['spill']:>5} "
                f"{o.get('occ', '?'):>3}->{x['occ']:<3} {x['margin']:>6} "
                f"{r.get('orig_instrs', '?'):>5}")
        if "path" not in r:
            print(f"{name:40} {'error: ' + r['error'][:60]:<60} {tail}", file=out)
            continue
        p = r["path"]
        t0, ot = p["t0"], p["other"]
        cats = [t0["chunk"][1 + i] for i in range(len(CATS))]
        # Other threads pass the same barriers; they add nothing else here.
        print(f"{name:40} {t0['chunk'][0]:>8} {ot['chunk'][0]:>9} {ot['block'][0]:>6} "
              f"{p['chunk_blocks']:>3} {cats[0]:>3} {cats[1]:>4} {cats[2]:>3} {cats[3]:>3} "
              f"{cats[4]:>4} {r['tag_branches']:>5} {tail}"
              f"{'' if p['steady'] else '  (not steady)'}", file=out)
        if r.get("orig_instrs"):
            ratios.append(max(ot["block"][0], 1) / r["orig_instrs"])
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{len(rows)} kernels: per-block protocol instructions / original static "
              f"instructions, geomean {geo:.3f}; max registers {max(regs)}; "
              f"min register margin {min(margins)}", file=out)
    # ptxas spends what a kernel's __launch_bounds__ allow on the protocol's
    # code too: the first thing to look at when a kernel is slower.
    print(f"occupancy lower after the rewrite: {', '.join(dropped) or 'none'}",
          file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    ap.add_argument("--runtime-include", default=ROOT / "runtime/include", type=pathlib.Path)
    ap.add_argument("--rewritten", type=pathlib.Path,
                    help="folder of the rewritten files (default <build>/test_inputs/smpart; "
                         ".gpu-bundle/test_inputs on the GPU machine)")
    ap.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--block", type=int, default=256,
                    help="threads per block where __launch_bounds__ gives none")
    cuda = pathlib.Path("/usr/local/cuda/bin")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or str(cuda / "nvcc"))
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or str(cuda / "ptxas"))
    ap.add_argument("--cxx", default=shutil.which("g++") or "c++")
    args = ap.parse_args()
    rewritten = args.rewritten or args.build / "test_inputs/smpart"
    if not rewritten.is_dir():
        sys.exit(f"error: no {rewritten}: build the target "
                 "smpart_transformed_test_inputs first")
    rows = analyse(args)
    report(rows, sys.stdout)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=list))


if __name__ == "__main__":
    main()
