#!/usr/bin/env python3
"""smpart-transform wall time against clang -fsyntax-only on the same file.

For each input file, runs the tool and the Clang baseline alternately N times
(after one unmeasured warm-up run of each) and prints the median wall time of
each and their ratio. Both commands parse the host and the device side of the
file with the real CUDA headers, so the ratio is the cost of the tool's
matching, rewriting and output over a plain front-end parse.

Inputs: files given with --input, the largest .cu file of --largest-of DIR
(default: the repository's test_inputs/ when no --input is given), and a file
with --kernels N kernels made by gen_many_kernels.py in a temporary directory
(default 200; 0 to skip).

This is a benchmark: it prints figures and does not judge them. It exits
non-zero only when a command fails (the failing command's stderr is printed).
Python 3 stdlib only.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TARGET_RATIO = 1.3


def largest_cu(directory):
    files = [os.path.join(directory, f) for f in os.listdir(directory)
             if f.endswith(".cu")]
    files = [f for f in files if os.path.isfile(f)]
    if not files:
        raise SystemExit("tool_speed: no .cu files in %s" % directory)
    return max(files, key=lambda f: (os.path.getsize(f), f))


def tool_cmd(args, src, out):
    return ([args.tool, src, "-o", out, "--cuda-path=" + args.cuda_path,
             "--cuda-gpu-arch=" + args.gpu_arch] + args.tool_arg)


def clang_cmd(args, src):
    return [args.clang, "-fsyntax-only", "-x", "cuda",
            "--cuda-path=" + args.cuda_path,
            "--cuda-gpu-arch=" + args.gpu_arch, "-Wno-unknown-cuda-version",
            "-isystem", os.path.join(args.cuda_path, "include", "cccl"),
            src] + args.clang_arg


def run_once(cmd, what):
    """Runs cmd; returns its wall time in seconds, or exits on failure."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        sys.stderr.write("tool_speed: cannot run %s: %s\n" % (cmd[0], e))
        sys.exit(2)
    elapsed = time.perf_counter() - t0
    if p.returncode != 0:
        sys.stdout.flush()
        sys.stderr.write("tool_speed: %s failed (exit %d): %s\n"
                         % (what, p.returncode, subprocess.list2cmdline(cmd)))
        sys.stderr.write(p.stderr.decode(errors="replace"))
        if p.stdout:
            sys.stderr.write(p.stdout.decode(errors="replace"))
        sys.exit(1)
    return elapsed


def measure(args, src, workdir):
    out = os.path.join(workdir, "out_" + os.path.basename(src))
    tcmd = tool_cmd(args, src, out)
    ccmd = clang_cmd(args, src)
    if args.verbose:
        print("  tool : " + subprocess.list2cmdline(tcmd))
        print("  clang: " + subprocess.list2cmdline(ccmd))
    # Warm-up (page cache, dynamic loader), not measured.
    run_once(tcmd, "smpart-transform on " + src)
    if not os.path.isfile(out):
        sys.stderr.write("tool_speed: smpart-transform wrote no output for %s\n"
                         % src)
        sys.exit(1)
    run_once(ccmd, "clang on " + src)
    tool_t, clang_t = [], []
    # Alternate the two so drift in machine load hits both alike.
    for _ in range(args.repeat):
        tool_t.append(run_once(tcmd, "smpart-transform on " + src))
        clang_t.append(run_once(ccmd, "clang on " + src))
    return tool_t, clang_t


def count_kernels(path):
    with open(path, errors="replace") as f:
        return f.read().count("__global__")


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Time smpart-transform against clang -fsyntax-only.")
    ap.add_argument("--tool", required=True, help="smpart-transform binary")
    ap.add_argument("--clang", default=shutil.which("clang++-22") or
                    "/usr/lib/llvm-22/bin/clang++",
                    help="clang++ 22 binary (default: clang++-22 on PATH)")
    ap.add_argument("--input", action="append", default=[], metavar="FILE",
                    help="a .cu file to measure (repeatable)")
    ap.add_argument("--largest-of", action="append", default=[],
                    metavar="DIR",
                    help="measure the largest .cu file in DIR (default: "
                         "test_inputs/ when no --input is given)")
    ap.add_argument("--kernels", type=int, default=200,
                    help="also measure a generated file with this many "
                         "kernels (default 200, 0 to skip)")
    ap.add_argument("--seed", type=int, default=1,
                    help="seed for the generated file (default 1)")
    ap.add_argument("--repeat", "-n", type=int, default=5,
                    help="measured runs per command (default 5; median)")
    ap.add_argument("--cuda-path", default="/usr/local/cuda")
    ap.add_argument("--gpu-arch", default="sm_90")
    ap.add_argument("--tool-arg", action="append", default=[],
                    help="extra argument for the tool (repeatable)")
    ap.add_argument("--clang-arg", action="append", default=[],
                    help="extra argument for clang (repeatable)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep the generated file and outputs in DIR")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the commands and every timing")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    for exe, name in ((args.tool, "--tool"), (args.clang, "--clang")):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)) \
                and shutil.which(exe) is None:
            ap.error("%s %s is not an executable" % (name, exe))

    inputs = [os.path.abspath(f) for f in args.input]
    dirs = args.largest_of
    if not inputs and not dirs:
        dirs = [os.path.join(REPO, "test_inputs")]
    for d in dirs:
        inputs.append(largest_cu(d))
    for f in inputs:
        if not os.path.isfile(f):
            ap.error("input %s does not exist" % f)

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        workdir = os.path.abspath(args.keep)
        cleanup = None
    else:
        cleanup = tempfile.TemporaryDirectory(prefix="smpart-bench-tool-")
        workdir = cleanup.name
    try:
        if args.kernels > 0:
            sys.dont_write_bytecode = True
            sys.path.insert(0, HERE)
            import gen_many_kernels
            gen = os.path.join(workdir, "many_kernels_%d.cu" % args.kernels)
            with open(gen, "w") as f:
                f.write(gen_many_kernels.generate(args.kernels, args.seed))
            inputs.append(gen)

        print("smpart-transform vs clang -fsyntax-only (host + device parse), "
              "median of %d runs" % args.repeat)
        print("tool : %s" % args.tool)
        print("clang: %s" % args.clang)
        rows = []
        for src in inputs:
            if args.verbose:
                print("%s:" % src)
            tool_t, clang_t = measure(args, src, workdir)
            tm = statistics.median(tool_t)
            cm = statistics.median(clang_t)
            if args.verbose:
                print("  tool  runs: " + " ".join("%.3f" % t for t in tool_t))
                print("  clang runs: " + " ".join("%.3f" % t for t in clang_t))
            rows.append((os.path.basename(src), count_kernels(src),
                         os.path.getsize(src), tm, cm, tm / cm))

        name_w = max([len("file")] + [len(r[0]) for r in rows])
        head = "%-*s %8s %9s %10s %11s %7s  %s" % (
            name_w, "file", "kernels", "bytes", "tool s", "clang s", "ratio",
            "target <= %.1f" % TARGET_RATIO)
        print(head)
        print("-" * len(head))
        for name, nk, size, tm, cm, ratio in rows:
            print("%-*s %8d %9d %10.3f %11.3f %7.2f  %s" % (
                name_w, name, nk, size, tm, cm, ratio,
                "within" if ratio <= TARGET_RATIO else "above"))
    finally:
        if cleanup is not None:
            cleanup.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
