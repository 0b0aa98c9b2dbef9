#!/usr/bin/env python3
"""Register and shared-memory cost of the rewrite, per kernel.

Compiles the original and the rewritten form of every test_inputs/ file (the
wrappers the GPU tests build, in <build>/runtime/tests/inputs/) with
`nvcc --resource-usage` and prints, per kernel, registers, static shared
memory, stack and spills before and after, and the dynamic shared memory the
runtime adds (the protocol's tail). Runs without a GPU.

  bench/gpu/resource_usage.py --build build [--arch sm_90]
"""
import argparse
import concurrent.futures
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"Compiling entry function '([^']+)' for")
USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?")
STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_resource_usage(text):
    """ptxas -v / nvcc --resource-usage output -> {kernel: regs, smem,
    stack, spill}. Shared with static_cost.py."""
    kernels, name = {}, None
    for line in text.splitlines():
        if m := ENTRY.search(line):
            name = m.group(1)
            kernels[name] = {"regs": 0, "smem": 0, "stack": 0, "spill": 0}
        elif name and (m := STACK.search(line)):
            kernels[name]["stack"] = int(m.group(1))
            kernels[name]["spill"] = int(m.group(2)) + int(m.group(3))
        elif name and (m := USED.search(line)):
            kernels[name]["regs"] = int(m.group(1))
            kernels[name]["smem"] = int(m.group(2) or 0)
    return kernels


def usage(nvcc, arch, root, wrapper):
    cmd = [nvcc, f"-arch={arch}", "-c", "--resource-usage", "-std=c++17",
           "-I", str(root / "runtime/include"), "-I", str(root / "runtime/tests"),
           "-o", "/dev/null", str(wrapper)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)}\n{out.stderr}")
    return parse_resource_usage(out.stderr)


def tail_bytes(nvcc, root):
    """smpart::kTailBytes, the dynamic shared memory the runtime adds per
    CTA, from the header itself (its size follows the knob image's)."""
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / "tail.cu"
        src.write_text('#include "smpart/control.hpp"\n#include <cstdio>\n'
                       'int main() { std::printf("%u", smpart::kTailBytes); }\n')
        cmd = [nvcc, "-std=c++17", "-I", str(root / "runtime/include"), "-o", f"{d}/tail", str(src)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"error: {' '.join(cmd)}\n{out.stderr}")
        return int(subprocess.run([f"{d}/tail"], capture_output=True, text=True,
                                  check=True).stdout)


def demangle(names):
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                         text=True).stdout.splitlines()
    return dict(zip(names, out))


def key(pretty):
    # gpu_orig_<file>::k(args) and gpu_xf_<file>::k(smpart::LaunchControl, args)
    pretty = re.sub(r"^gpu_(orig|xf)_", "", pretty)
    pretty = pretty.replace("smpart::LaunchControl, ", "").replace("(smpart::LaunchControl)", "()")
    return pretty


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", type=pathlib.Path)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parents[2]
    inputs = args.build / "runtime/tests/inputs"
    origs = sorted(inputs.glob("gpu_orig_*.cu"))
    if not origs:
        sys.exit(f"error: no wrappers in {inputs}: build smpart_gpu_inputs first")
    jobs = [(o, inputs / o.name.replace("gpu_orig_", "gpu_xf_")) for o in origs]
    with concurrent.futures.ThreadPoolExecutor() as pool:
        results = list(pool.map(
            lambda w: usage(args.nvcc, args.arch, root, w), [p for j in jobs for p in j]))
    orig, xf = {}, {}
    for i, r in enumerate(results):
        (orig if i % 2 == 0 else xf).update(r)
    names = demangle(list(orig) + list(xf))
    o_by = {key(names[n]): v for n, v in orig.items()}
    # The rewritten file keeps the original kernel too (launched when
    # SMPART_DISABLE=1 or the rewritten launch is refused): only the kernels
    # that take the LaunchControl are the rewritten ones.
    x_by = {key(names[n]): v for n, v in xf.items()
            if "smpart::LaunchControl" in names[n]}
    print(f"{'kernel':58} {'regs':>9} {'smem (static)':>14} {'stack':>9} {'spill':>9}")
    deltas = []
    for k in sorted(x_by):
        x, o = x_by[k], o_by.get(k)
        if o is None:
            continue
        deltas.append(x["regs"] - o["regs"])
        print(f"{k[:58]:58} {o['regs']:>3} -> {x['regs']:<3} {o['smem']:>5} -> {x['smem']:<5}"
              f" {o['stack']:>3} -> {x['stack']:<3} {o['spill']:>3} -> {x['spill']:<3}")
    if deltas:
        print(f"{len(deltas)} kernels: register delta min {min(deltas)}, "
              f"median {sorted(deltas)[len(deltas) // 2]}, max {max(deltas)}; "
              f"static shared memory added: 0 by construction; dynamic shared memory "
              f"added per CTA: {tail_bytes(args.nvcc, root)} bytes (+ padding of the user's "
              f"size to 16)")


if __name__ == "__main__":
    main()
