#!/usr/bin/env python3
"""Runs smpart-transform over a directory of public CUDA sources and prints
parse / transform / compile-after-rewrite / idempotence rates.

Only translation units that nvcc's front end accepts (nvcc -cuda) count:
the question is whether the tool accepts what nvcc accepts. For each:
  parse      the tool parsed both sides (no "does not compile")
  transform  the tool exited 0 and wrote its output
  compile    nvcc -arch=sm_90 -c of the output (with -I runtime/include)
  idempotent the tool run on its own output changes nothing

Include paths per file: its own folder, its parent, and every `Common`
or `common` folder under the given roots (cuda-samples, rodinia).
Fetched sources are never committed; see README.md.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def run(cmd, timeout=300):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timeout"


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            line = re.sub(r"^.*?(error)", r"\1", line)
            return re.sub(r"'[^']*'", "'…'", line)[:120]
    return "(no error line)"


def includes_for(path, commons):
    d = os.path.dirname(path)
    flags = ["-I" + d, "-I" + os.path.dirname(d)]
    return flags + ["-I" + c for c in commons]


def check(path, args, work):
    flags = includes_for(path, args.commons)
    r = {"file": path}
    base = os.path.join(work, re.sub(r"[^A-Za-z0-9_.]", "_", path))
    rc, _, err = run([args.nvcc, "-arch=sm_90", "-cuda", path, "-o",
                      base + ".ii"] + flags)
    r["nvcc"] = rc == 0
    if not r["nvcc"]:
        return r
    out = base + ".smpart.cu"
    rc, _, err = run([args.tool, path, "-o", out, "--"] + flags)
    r["parse"] = "does not compile" not in err and rc in (0, 1)
    r["transform"] = rc == 0 and os.path.exists(out)
    if not r["parse"]:
        r["why"] = first_error(err)
    elif not r["transform"]:
        r["why"] = "transform: " + first_error(err)
    if not r["transform"]:
        return r
    r["kernels"] = err.count("not transformed")
    if not args.no_compile:
        rc, _, err = run([args.nvcc, "-arch=sm_90", "-c", out, "-o",
                          base + ".o", "-I" + args.runtime_include] + flags)
        r["compile"] = rc == 0
        if rc:
            r["compile_why"] = first_error(err)
    again = base + ".again.cu"
    rc, _, _ = run([args.tool, out, "-o", again, "--"] + flags)
    r["idempotent"] = (rc == 0 and open(out, "rb").read() ==
                       open(again, "rb").read())
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="+", help="directories of .cu files")
    ap.add_argument("--tool", default=os.path.join(
        REPO, "build", "tool", "transform", "smpart-transform"))
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--runtime-include",
                    default=os.path.join(REPO, "runtime", "include"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0,
                    help="only the first N files (sorted)")
    ap.add_argument("--every", type=int, default=1,
                    help="only every Nth file (sorted), for a quick sample")
    ap.add_argument("--no-compile", action="store_true",
                    help="skip nvcc -c of the rewritten files")
    ap.add_argument("--json", help="write per-file results here")
    args = ap.parse_args()

    files, commons = [], []
    for root in args.roots:
        for d, dirs, names in os.walk(root):
            dirs.sort()
            if os.path.basename(d) in ("Common", "common"):
                commons.append(os.path.abspath(d))
            files += [os.path.abspath(os.path.join(d, n))
                      for n in sorted(names) if n.endswith(".cu")]
    args.commons = commons
    files = files[::args.every]
    if args.limit:
        files = files[:args.limit]
    with tempfile.TemporaryDirectory(prefix="smpart-corpus-") as work:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda f: check(f, args, work), files))

    ok = [r for r in results if r["nvcc"]]
    n = len(ok)
    def rate(key, pool):
        k = sum(1 for r in pool if r.get(key))
        return "%d/%d (%.1f%%)" % (k, len(pool), 100.0 * k / max(1, len(pool)))
    xf = [r for r in ok if r.get("transform")]
    print("files: %d .cu, %d accepted by nvcc -cuda" % (len(results), n))
    print("parse:      " + rate("parse", ok))
    print("transform:  " + rate("transform", ok))
    if not args.no_compile:
        print("compile:    " + rate("compile", xf) + " of transformed")
    print("idempotent: " + rate("idempotent", xf) + " of transformed")
    why = collections.Counter(r["why"] for r in ok if "why" in r)
    why.update("compile: " + r["compile_why"] for r in xf
               if "compile_why" in r)
    if why:
        print("failures:")
        for text, count in why.most_common(25):
            print("  %3d  %s" % (count, text))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
