#!/usr/bin/env python3
"""smpart-transform over corpora of public CUDA sources: how much of each
parses, is transformed, compiles after the rewrite, is left unchanged by a
second run (idempotence) and links.

Corpora are fetched, never committed (README.md says from where and at which
commit). Rates are over the translation units nvcc itself compiles
(--nvcc-baseline, the default), so that a file nvcc rejects does not count
against the tool.

  bench/corpus/run_corpus.py --tool build/tool/transform/smpart-transform \\
      --corpus cuda-samples=/src/cuda-samples --corpus llm.c=/src/llm.c \\
      [--jobs 1] [--limit N] [--no-compile] [--markdown]

A corpus NAME that CORPORA below knows brings its build flags (the folder its
TUs live in, defines, libraries, whether its headers hold kernels);
any other name is a plain folder of `.cu` files. `--src DIR` is
`--corpus <folder name>=DIR`.

Per TU: parse (tool exit 0), transformed (at least one kernel rewritten,
from the manifest), refused kernels, compile (nvcc -c of the output with the
runtime headers), idempotent (the tool on its own output changes nothing),
link (programs with a main() that link as they are: linked again with
libsmpart). A corpus whose kernels live in headers (or in `.cu` files other
`.cu` files include) is rewritten in place in a copy of its tree (`-i
--header-filter` matching the whole tree), as a build step would; the
others with `-o`. Failures are listed with the first line of their error.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The one CUDA runtime call of the older suites that CUDA 13 removed (its
# replacement has the same signature): a port, not a change of their code.
OLD_API = "-DcudaThreadSynchronize=cudaDeviceSynchronize"
# CUDA 12 calls whose signature CUDA 13 changed, pre-included where needed.
PORT = pathlib.Path(__file__).resolve().parent / "cuda13_port.h"

# What each measured corpus needs to build as its own build files build it.
# under: where its TUs are; nvcc: flags of its Makefile that change what
# compiles; include: its -I folders (from the corpus root) beyond the
# Common/common/include/inc/util folders found anyway; libs: what its
# programs link; in_place: its kernels live in headers or in `.cu` files that
# other `.cu` files include, so each TU is rewritten in place (-i) in a copy
# of the tree with every header of the tree matched by --header-filter.
CORPORA = {
    "cuda-samples": {"repo": "NVIDIA/cuda-samples", "under": "."},
    "rodinia": {"repo": "yuhc/gpu-rodinia", "under": "cuda", "nvcc": [OLD_API],
                "include": ["cuda/lud/common"], "in_place": True},
    "polybench-acc": {"repo": "cavazos-lab/PolyBench-ACC", "under": "CUDA",
                      "include": ["CUDA/utilities"], "nvcc": [OLD_API]},
    "llm.c": {"repo": "karpathy/llm.c", "under": ".",
              "nvcc": ["--use_fast_math", "-include", str(PORT)],
              "libs": ["-lcublas", "-lcublasLt"], "in_place": True},
}


def run(cmd, timeout=600, cwd=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "timeout"
    except OSError as e:
        return 127, f"error: {cmd[0]}: {e.strerror}"


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else ""


def include_dirs(src, file, extra=()):
    dirs = [file.parent] + [src / d for d in extra]
    for name in ("Common", "common", "include", "inc", "util"):
        for d in [src / name] + [p for p in src.glob(f"*/{name}")]:
            if d.is_dir():
                dirs.append(d)
    return dirs


def snapshot(tree):
    """Digest of every source file under tree (what -i may have changed)."""
    h = {}
    for p in sorted(tree.rglob("*")):
        if p.is_file() and p.suffix in (".cu", ".cuh", ".h", ".hpp", ".inl"):
            h[str(p.relative_to(tree))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return h


def count_kernels(manifest, r):
    try:
        for f in json.loads(manifest.read_text()).get("files", []):
            for k in f.get("kernels", []):
                r["transformed"] += k.get("status") == "transformed"
                r["refused"] += k.get("status") == "refused"
    except (OSError, ValueError):
        pass


def one(args, corpus, file):
    src, cfg = corpus["src"], corpus["cfg"]
    r = {"corpus": corpus["name"], "file": str(file.relative_to(src)), "nvcc": None,
         "parse": False, "transformed": 0, "refused": 0, "compile": None,
         "idempotent": None, "link": None, "error": ""}
    flags = ["-std=c++17"] + cfg.get("nvcc", [])
    libs = cfg.get("libs", [])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        nvcc = [args.nvcc, f"-arch={args.arch}", "-c"] + flags
        inc = [f"-I{d}" for d in include_dirs(src, file, cfg.get("include", []))]
        if args.nvcc_baseline:
            rc, out = run(nvcc + inc + [str(file), "-o", str(tmp / "orig.o")])
            r["nvcc"] = rc == 0
            if rc != 0:
                r["error"] = "nvcc: " + first_error(out)
                return r
        manifest = tmp / "manifest.json"
        if cfg.get("in_place"):
            # Rewrite a copy of the tree in place, its headers included.
            tree = tmp / "tree"
            shutil.copytree(src, tree, symlinks=True,
                            ignore=shutil.ignore_patterns(".git"))
            out_cu = tree / file.relative_to(src)
            inc = [f"-I{d}" for d in include_dirs(tree, out_cu, cfg.get("include", []))]
            tool = [args.tool, "-i", f"--header-filter={re.escape(str(tree))}/"]
            rc, out = run(tool + [f"--manifest={manifest}", str(out_cu), "--"] + inc + flags)
            r["parse"] = rc == 0
            if rc != 0:
                r["error"] = "tool: " + first_error(out)
                return r
            count_kernels(manifest, r)
            before = snapshot(tree)
            rc2, _ = run(tool + [str(out_cu), "--"] + inc + flags)
            r["idempotent"] = rc2 == 0 and snapshot(tree) == before
        else:
            out_cu = tmp / file.name
            rc, out = run([args.tool, str(file), "-o", str(out_cu),
                           f"--manifest={manifest}", "--"] + inc + flags)
            r["parse"] = rc == 0
            if rc != 0:
                r["error"] = "tool: " + first_error(out)
                return r
            count_kernels(manifest, r)
            again = tmp / ("again_" + file.name)
            rc2, _ = run([args.tool, str(out_cu), "-o", str(again), "--"] + inc + flags)
            r["idempotent"] = rc2 == 0 and again.read_bytes() == out_cu.read_bytes()
        if not args.compile:
            return r
        rc, out = run(nvcc + inc + [f"-I{ROOT / 'runtime/include'}", str(out_cu),
                                    "-o", str(tmp / "xf.o")])
        r["compile"] = rc == 0
        if rc != 0:
            r["error"] = "compile: " + first_error(out)
            return r
        if args.lib and args.nvcc_baseline and \
                re.search(r"\bint\s+main\s*\(", file.read_text(errors="ignore")):
            link = [args.nvcc, f"-arch={args.arch}"]
            rc_o, _ = run(link + [str(tmp / "orig.o"), "-o", str(tmp / "orig")] + libs)
            if rc_o == 0:  # only programs that link as they are
                rc, out = run(link + [str(tmp / "xf.o"), args.lib, "-lpthread", "-o",
                                      str(tmp / "xf")] + libs)
                r["link"] = rc == 0
                if rc != 0:
                    r["error"] = "link: " + first_error(out)
    return r


def rates(rows, nvcc_baseline):
    """(label, ok, of) per measured rate, over what nvcc compiles."""
    base = [r for r in rows if r["nvcc"] or not nvcc_baseline]
    parsed = [r for r in base if r["parse"]]
    compiled = [r for r in parsed if r["compile"] is not None]
    linked = [r for r in rows if r["link"] is not None]
    return [("nvcc compiles the original", len(base), len(rows)),
            ("parse", len(parsed), len(base)),
            ("transformed (>= 1 kernel)", sum(1 for r in parsed if r["transformed"]),
             len(parsed)),
            ("idempotent", sum(1 for r in parsed if r["idempotent"]), len(parsed)),
            ("compile after rewrite", sum(1 for r in compiled if r["compile"]),
             len(compiled)),
            ("link (programs + libsmpart)", sum(1 for r in linked if r["link"]),
             len(linked))]


def pct(ok, n):
    return f"{ok}/{n} ({100.0 * ok / n:.1f}%)" if n else "-"


def report(name, src, rows, nvcc_baseline):
    print(f"{name}: {len(rows)} translation units under {src}")
    for label, ok, n in rates(rows, nvcc_baseline):
        print(f"  {label:30} {pct(ok, n)}")
    print(f"  kernels transformed {sum(r['transformed'] for r in rows)}, "
          f"refused {sum(r['refused'] for r in rows)}")
    for r in rows:
        if r["error"]:
            print(f"  {'FAIL' if r['nvcc'] is not False else 'SKIP'} {r['file']}: "
                  f"{r['error']}")


def markdown(corpora, by_corpus, nvcc_baseline):
    names = [c["name"] for c in corpora]
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    table = [rates(by_corpus[n], nvcc_baseline) for n in names]
    for i, (label, _, _) in enumerate(table[0]):
        print(f"| {label} | " + " | ".join(pct(t[i][1], t[i][2]) for t in table) + " |")
    print("| kernels transformed / refused | " + " | ".join(
        f"{sum(r['transformed'] for r in by_corpus[n])} / "
        f"{sum(r['refused'] for r in by_corpus[n])}" for n in names) + " |")


def corpus_arg(text):
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"'{text}': expected NAME=DIR")
    return name, pathlib.Path(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--corpus", action="append", type=corpus_arg, default=[],
                    metavar="NAME=DIR", help="a corpus (repeatable); known names: " +
                    ", ".join(CORPORA))
    ap.add_argument("--src", type=pathlib.Path, help="a folder of .cu files")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--lib", default=str(ROOT / "build/runtime/src/libsmpart.a"),
                    help="libsmpart.a for the link step ('' to skip)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="TUs processed at once (default 1: nvcc is memory-hungry)")
    ap.add_argument("--limit", type=int, default=0, help="first N TUs of each corpus")
    ap.add_argument("--no-compile", dest="compile", action="store_false",
                    help="parse/transform/idempotence only (no nvcc after the rewrite)")
    ap.add_argument("--no-nvcc-baseline", dest="nvcc_baseline", action="store_false",
                    help="do not check that nvcc compiles the original first")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the rates as one Markdown table, a column per corpus")
    ap.add_argument("--json", help="write every TU's result here")
    args = ap.parse_args()
    if args.src:
        args.corpus.append((args.src.resolve().name, args.src))
    if not args.corpus:
        ap.error("give --corpus NAME=DIR or --src DIR")
    if args.lib and not pathlib.Path(args.lib).exists():
        args.lib = ""
    corpora, jobs = [], []
    for name, path in args.corpus:
        cfg = CORPORA.get(name, {})
        src = path.resolve()
        files = sorted((src / cfg.get("under", ".")).rglob("*.cu"))
        if args.limit:
            files = files[:args.limit]
        if not files:
            sys.exit(f"error: no .cu files under {src / cfg.get('under', '.')}")
        corpus = {"name": name, "src": src, "cfg": cfg}
        corpora.append(corpus)
        jobs += [(corpus, f) for f in files]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda j: one(args, *j), jobs))
    by_corpus = {c["name"]: [r for r in rows if r["corpus"] == c["name"]] for c in corpora}
    for c in corpora:
        report(c["name"], c["src"], by_corpus[c["name"]], args.nvcc_baseline)
    if args.markdown:
        markdown(corpora, by_corpus, args.nvcc_baseline)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
