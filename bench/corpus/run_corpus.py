#!/usr/bin/env python3
"""smpart-transform over a corpus of public CUDA sources: how much of it parses,
is transformed, compiles after the rewrite, is left unchanged by a second run
(idempotence) and links.

The corpus is fetched, never committed (e.g. NVIDIA/cuda-samples unpacked
into a folder). Rates are over the translation units nvcc itself compiles
(--nvcc-baseline, the default), so that a file nvcc rejects does not count
against the tool.

  bench/corpus/run_corpus.py --tool build/tool/transform/smpart-transform \\
      --src /path/to/cuda-samples [--jobs 2] [--limit N] [--no-compile]

Per file: parse (tool exit 0), transformed (at least one kernel rewritten,
from the manifest), refused kernels, compile (nvcc -c of the output with the
runtime headers), idempotent (the tool on its own output changes nothing),
link (single-file programs with a main(): linked with libsmpart). Failures are
listed with the first line of their error.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(cmd, timeout=300):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "timeout"


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else ""


def include_dirs(src, file):
    dirs = [file.parent]
    for name in ("Common", "common", "include", "inc"):
        for d in [src / name] + [p for p in src.glob(f"*/{name}")]:
            if d.is_dir():
                dirs.append(d)
    return dirs


def one(args, file):
    r = {"file": str(file.relative_to(args.src)), "nvcc": None, "parse": False,
         "transformed": 0, "refused": 0, "compile": None, "idempotent": None,
         "link": None, "error": ""}
    inc = [f"-I{d}" for d in include_dirs(args.src, file)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        nvcc = [args.nvcc, f"-arch={args.arch}", "-std=c++17", "-c"]
        if args.nvcc_baseline:
            rc, out = run(nvcc + inc + [str(file), "-o", str(tmp / "orig.o")])
            r["nvcc"] = rc == 0
            if rc != 0:
                r["error"] = "nvcc: " + first_error(out)
                return r
        out_cu = tmp / file.name
        manifest = tmp / "manifest.json"
        rc, out = run([args.tool, str(file), "-o", str(out_cu),
                       f"--manifest={manifest}", "--"] + inc + ["-std=c++17"])
        r["parse"] = rc == 0
        if rc != 0:
            r["error"] = "tool: " + first_error(out)
            return r
        try:
            kernels = json.loads(manifest.read_text()).get("files", [{}])
            for f in kernels:
                for k in f.get("kernels", []):
                    r["transformed"] += k.get("status") == "transformed"
                    r["refused"] += k.get("status") == "refused"
        except (OSError, ValueError):
            pass
        again = tmp / ("again_" + file.name)
        rc2, out2 = run([args.tool, str(out_cu), "-o", str(again), "--"] + inc +
                        ["-std=c++17"])
        r["idempotent"] = rc2 == 0 and again.read_text() == out_cu.read_text()
        if not args.compile:
            return r
        rc, out = run(nvcc + inc + [f"-I{ROOT / 'runtime/include'}", str(out_cu),
                                    "-o", str(tmp / "xf.o")])
        r["compile"] = rc == 0
        if rc != 0:
            r["error"] = "compile: " + first_error(out)
            return r
        if args.lib and re.search(r"\bint\s+main\s*\(", file.read_text(errors="ignore")):
            rc_o, _ = run([args.nvcc, f"-arch={args.arch}", str(tmp / "orig.o"),
                           "-o", str(tmp / "orig")]) if args.nvcc_baseline else (1, "")
            if rc_o == 0:  # only programs that link as they are
                rc, out = run([args.nvcc, f"-arch={args.arch}", str(tmp / "xf.o"),
                               args.lib, "-lpthread", "-o", str(tmp / "xf")])
                r["link"] = rc == 0
                if rc != 0:
                    r["error"] = "link: " + first_error(out)
    return r


def rate(rows, key, among):
    pool = [r for r in rows if among(r)]
    ok = sum(1 for r in pool if r[key])
    return ok, len(pool)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--src", required=True, type=pathlib.Path)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--lib", default=str(ROOT / "build/runtime/src/libsmpart.a"),
                    help="libsmpart.a for the link step ('' to skip)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--no-compile", dest="compile", action="store_false",
                    help="parse/transform/idempotence only (no nvcc after the rewrite)")
    ap.add_argument("--no-nvcc-baseline", dest="nvcc_baseline", action="store_false",
                    help="do not check that nvcc compiles the original first")
    ap.add_argument("--json", help="write every file's result here")
    args = ap.parse_args()
    args.src = args.src.resolve()
    if args.lib and not pathlib.Path(args.lib).exists():
        args.lib = ""
    files = sorted(args.src.rglob("*.cu"))
    if args.limit:
        files = files[:args.limit]
    if not files:
        sys.exit(f"error: no .cu files under {args.src}")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda f: one(args, f), files))
    base = (lambda r: r["nvcc"]) if args.nvcc_baseline else (lambda r: True)
    print(f"{len(files)} translation units under {args.src}")
    if args.nvcc_baseline:
        n = sum(1 for r in rows if r["nvcc"])
        print(f"  nvcc compiles the original: {n}/{len(rows)}")
    for label, key, among in [
            ("parse", "parse", base),
            ("transformed (>= 1 kernel)", "transformed", lambda r: base(r) and r["parse"]),
            ("idempotent", "idempotent", lambda r: base(r) and r["parse"]),
            ("compile after rewrite", "compile", lambda r: base(r) and r["parse"] and r["compile"] is not None),
            ("link (single-file programs)", "link", lambda r: r["link"] is not None)]:
        ok, n = rate(rows, key, among)
        if n:
            print(f"  {label:30} {ok}/{n} = {100.0 * ok / n:.1f}%")
    kernels = sum(r["transformed"] for r in rows)
    refused = sum(r["refused"] for r in rows)
    print(f"  kernels transformed {kernels}, refused {refused}")
    for r in rows:
        if r["error"] and (not args.nvcc_baseline or r["nvcc"]):
            print(f"  FAIL {r['file']}: {r['error']}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
