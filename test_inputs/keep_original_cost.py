#!/usr/bin/env python3
"""What keeping every kernel's original definition costs at build time.

Rewrites every test_inputs/ file with `--keep-original=all` (the default)
and with `--keep-original=headers` (only what other files need; here
nothing), compiles each output with `nvcc -arch=sm_90 -c`, and prints the
nvcc time and object size of both, per file and in total, with the ratios.
Both variants are measured in the same run, interleaved file by file.

  python3 test_inputs/keep_original_cost.py [--tool build/tool/transform/smpart-transform]
      [--nvcc /usr/local/cuda/bin/nvcc] [--repeat 3]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def inputs():
    """The SMPART_INPUT_FILE rows of inputs.def."""
    names = []
    with open(os.path.join(HERE, "inputs.def")) as f:
        for line in f:
            if line.startswith("SMPART_INPUT_FILE("):
                names.append(line[len("SMPART_INPUT_FILE("):].split(")")[0])
    return names


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tool", default=os.path.join(
        ROOT, "build/tool/transform/smpart-transform"))
    p.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    p.add_argument("--repeat", type=int, default=3,
                   help="nvcc runs per output; the fastest counts")
    a = p.parse_args()
    modes = ["all", "headers"]
    total = {m: [0.0, 0] for m in modes}
    print("%-18s %10s %10s %10s %10s" % ("file", "all s", "headers s",
                                         "all B", "headers B"))
    with tempfile.TemporaryDirectory() as tmp:
        for name in inputs():
            row = {}
            for m in modes:
                out = os.path.join(tmp, "%s.%s.cu" % (name, m))
                run([a.tool, "--keep-original=" + m,
                     os.path.join(HERE, name + ".cu"), "-o", out, "--",
                     "--cuda-gpu-arch=sm_90"])
                obj = out + ".o"
                best = None
                for _ in range(a.repeat):
                    t0 = time.monotonic()
                    run([a.nvcc, "-arch=sm_90", "-c", "-I",
                         os.path.join(ROOT, "runtime/include"), out, "-o",
                         obj])
                    t = time.monotonic() - t0
                    best = t if best is None else min(best, t)
                row[m] = (best, os.path.getsize(obj))
                total[m][0] += best
                total[m][1] += row[m][1]
            print("%-18s %10.2f %10.2f %10d %10d" % (
                name, row["all"][0], row["headers"][0], row["all"][1],
                row["headers"][1]))
    print("%-18s %10.2f %10.2f %10d %10d" % (
        "total", total["all"][0], total["headers"][0], total["all"][1],
        total["headers"][1]))
    print("keep-original=all vs headers: nvcc time x%.3f, object size x%.3f"
          % (total["all"][0] / total["headers"][0],
             total["all"][1] / total["headers"][1]))


if __name__ == "__main__":
    main()
