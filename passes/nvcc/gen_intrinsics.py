#!/usr/bin/env python3
"""Lists the device functions nvcc's headers declare and writes a probe per
overload, so that what the tool's parse lacks shows up as an error.

The CUDA toolkit declares its intrinsics in a regular style, one per line:
`__SM_32_INTRINSICS_DECL__ void __stcs(int4 *ptr, int4 value) ...`. This
script reads those declarations from the toolkit's own headers (the
sm_*_intrinsics, atomic, crt/, device_functions, cuda_fp16 and cuda_bf16
headers), keeps the free functions a program can call, and writes one
device function per overload that calls it with arguments of exactly its
parameter types:

    __device__ void probe_12() { __stcs(smpart_arg<int4 *>(), smpart_arg<int4>()); }

With --nvcc, the probes nvcc itself refuses for the chosen arch (functions
of newer GPUs, host-only ones, ones behind other guards) are dropped, by
compiling the file and removing the probes of each error line until it
compiles. What is left is what nvcc provides; the tool's parse must accept
all of it (lit_tests/toolkit/nvcc-intrinsics.test). clang's CUDA wrapper
lacks some of it; passes/nvcc/include/nvcc_compat.h declares the rest.

    gen_intrinsics.py --cuda-path /usr/local/cuda --nvcc nvcc -o probes.cu
    gen_intrinsics.py --cuda-path /usr/local/cuda --list   # names, overloads
    gen_intrinsics.py --nvcc nvcc --update-compat passes/nvcc/include/nvcc_compat.h

The two preprocessors differ too: --macros writes a file that parses only
if the parse defines every macro nvcc predefines (but those it leaves out
on purpose), and --compare-enums names the enumerators nvcc's host
preprocessing of the toolkit's headers sees and the parse's does not.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

# The headers nvcc's cuda_runtime.h brings in (and the two half-precision
# ones programs include), whose free device functions programs call.
HEADER_GLOBS = [
    "crt/device_functions.h", "crt/device_functions.hpp",
    "crt/device_double_functions.h", "crt/device_double_functions.hpp",
    "crt/math_functions.h", "crt/math_functions.hpp",
    "crt/sm_*_rt.h", "crt/sm_*_rt.hpp",
    "device_atomic_functions.h", "device_atomic_functions.hpp",
    "sm_*_intrinsics.h", "sm_*_intrinsics.hpp",
    "sm_*_atomic_functions.h", "sm_*_atomic_functions.hpp",
    "cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp",
]

# A declaration begins with qualifiers, one of which says it is for the
# device: the toolkit's *_DECL__ macros or __device__ itself.
QUALIFIER = r"(?:__\w+__|static|extern|inline|_CRTIMP|__CUDA_MATH_CRTIMP)"
DECL = re.compile(
    r"^[ \t]*((?:" + QUALIFIER + r"[ \t]+)+)"   # qualifiers
    r"([A-Za-z_][\w \t\*&:<>,]*?)[ \t\*&]*?"     # return type
    r"\b([A-Za-z_]\w*)[ \t]*\(([^;{}()]*)\)",   # name (parameters)
    re.M)
NOT_FUNCTIONS = {"if", "while", "for", "switch", "return", "sizeof",
                 "decltype", "defined", "operator"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def join_continuations(text):
    """Declarations that wrap: join a line ending inside `(` with the next."""
    out, depth, line = [], 0, ""
    for raw in text.split("\n"):
        line = line + " " + raw if line else raw
        depth = line.count("(") - line.count(")")
        if depth > 0 and len(line) < 2000:
            continue
        out.append(line)
        line = ""
    out.append(line)
    return "\n".join(out)


def parameter_types(params):
    """The types of a parameter list, names and default values dropped."""
    params = params.strip()
    if params in ("", "void"):
        return []
    types = []
    for p in params.split(","):
        p = p.split("=")[0].strip()
        if p == "...":
            return None
        if "[" in p or "(" in p:
            return None
        words = re.findall(r"[A-Za-z_]\w*|\*|&", p)
        if not words:
            return None
        # `const int4 *const ptr`: the last identifier after a type is the
        # name, unless the whole thing is a type (`unsigned int`).
        builtin = {"int", "long", "short", "char", "float", "double",
                   "unsigned", "signed", "bool", "void", "const",
                   "volatile"}
        identifiers = [w for w in words if w not in ("*", "&")]
        if len(identifiers) > 1 and words[-1] not in ("*", "&") and \
                words[-1] not in builtin:
            words = words[:-1]
        # LLVM's spelling, as clang-format writes it: `const __half *const`.
        types.append(" ".join(words).replace("* ", "*").replace("& ", "&"))
    return types


# The headers' own helpers, which programs do not call: __internal_*,
# *_impl, __nv_*, and the builtins behind atomicAdd & co (__iAtomicAdd).
INTERNAL = re.compile(r"^(__internal|__nv_|__cuda|_[^_])|_internal$|_impl$|"
                      r"^__[a-z0-9]*Atomic[A-Z]")


def is_public(name):
    return not (INTERNAL.search(name) or name.isupper()
                or name in NOT_FUNCTIONS)


def declarations(cuda_path):
    """(name, parameter types, return type) of every public device
    function, in the headers' order; one per overload."""
    include = os.path.join(cuda_path, "include")
    seen, found = set(), []
    for pattern in HEADER_GLOBS:
        for path in sorted(glob.glob(os.path.join(include, pattern))):
            text = join_continuations(strip_comments(open(path).read()))
            for m in DECL.finditer(text):
                qualifiers, returns, name, params = m.groups()
                if "DECL" not in qualifiers and "__device__" not in qualifiers:
                    continue
                if "MMA" in qualifiers or not is_public(name):
                    continue
                before = text[:m.start()].rstrip()
                if before.endswith(">"):  # a template
                    continue
                types = parameter_types(params)
                if types is None:
                    continue
                key = (name, tuple(types))
                if key not in seen:
                    seen.add(key)
                    found.append((name, tuple(types), " ".join(
                        returns.split())))
    return found


PRELUDE = """\
// Generated by passes/nvcc/gen_intrinsics.py from the CUDA {version}
// headers: one probe per overload of the device functions nvcc declares
// (and nvcc compiles for {arch}). The tool's parse must accept every one.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <class T> __device__ T smpart_arg();
"""


def probe(index, name, types):
    args = ", ".join("smpart_arg<%s>()" % t for t in types)
    return "__device__ void probe_%d() { %s(%s); }\n" % (index, name, args)


def write(path, decls, version, arch):
    with open(path, "w") as f:
        f.write(PRELUDE.format(version=version, arch=arch))
        for i, (name, types, _) in enumerate(decls):
            f.write(probe(i, name, types))
    return path


def error_lines(output, path):
    base = os.path.basename(path)
    lines = set()
    for m in re.finditer(r"([^\s:()]+)\((\d+)\): error", output):
        if os.path.basename(m.group(1)) == base:
            lines.add(int(m.group(2)))
    return lines


def nvcc_filter(decls, nvcc, arch, version):
    """The declarations whose probes nvcc compiles for \\p arch."""
    prelude_lines = PRELUDE.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probes.cu")
        for _ in range(50):
            write(src, decls, version, arch)
            run = subprocess.run(
                [nvcc, "-arch=" + arch, "-std=c++17", "-c", src, "-o",
                 os.path.join(tmp, "probes.o")],
                capture_output=True, text=True)
            if run.returncode == 0:
                return decls
            bad = {l - prelude_lines - 1 for l in error_lines(
                run.stdout + run.stderr, src)}
            if not bad:
                sys.exit("gen_intrinsics: nvcc fails outside the probes:\n" +
                         run.stdout + run.stderr)
            decls = [d for i, d in enumerate(decls) if i not in bad]
    sys.exit("gen_intrinsics: nvcc still fails after 50 rounds")


def parse_errors(src, clang, cuda_path, arch, resource_dir, compat):
    """Lines of \p src that the tool's parse (clang's CUDA wrapper and the
    compatibility header, either side) rejects."""
    bad = set()
    for side in ("--cuda-host-only", "--cuda-device-only"):
        cmd = [clang, "-x", "cuda", side, "--cuda-gpu-arch=" + arch,
               "--cuda-path=" + cuda_path, "-Wno-unknown-cuda-version",
               "-isystem", os.path.join(cuda_path, "include", "cccl"),
               "-fsyntax-only", "-ferror-limit=0", "-w"]
        if resource_dir:
            cmd.append("-resource-dir=" + resource_dir)
        if compat:
            cmd += ["-include", compat]
        run = subprocess.run(cmd + [src], capture_output=True, text=True)
        for m in re.finditer(r"^([^\s:]+):(\d+):\d+: error", run.stderr,
                             re.M):
            if os.path.basename(m.group(1)) == os.path.basename(src):
                bad.add(int(m.group(2)))
            else:
                sys.exit("gen_intrinsics: the parse fails outside the "
                         "probes:\n" + run.stderr)
    return bad


def gaps(decls, args, version):
    """The declarations the tool's parse lacks."""
    prelude_lines = PRELUDE.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        src = write(os.path.join(tmp, "probes.cu"), decls, version, args.arch)
        bad = {l - prelude_lines - 1 for l in parse_errors(
            src, args.clang, args.cuda_path, args.arch, args.resource_dir,
            args.compat)}
    return [d for i, d in enumerate(decls) if i in bad]


BEGIN = "// BEGIN gen_intrinsics.py"
END = "// END gen_intrinsics.py"


def compat_block(missing, version, arch):
    lines = [BEGIN + ": the device functions of the CUDA %s" % version,
             "// headers (nvcc, %s) that clang's CUDA wrapper lacks." % arch,
             "// Regenerate with gen_intrinsics.py --update-compat."]
    for name, types, returns in missing:
        lines.append("__device__ %s %s(%s);" % (returns, name,
                                                ", ".join(types)))
    lines.append(END)
    return "\n".join(lines) + "\n"


def update_compat(path, missing, version, arch):
    text = open(path).read()
    block = compat_block(missing, version, arch)
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block
    open(path, "w").write(text)


# Macros nvcc predefines that the parse leaves undefined on purpose:
# __NVCC__ tells cccl and cooperative groups that nvcc's builtins exist
# (clang's do not match them); __CUDA_ARCH__ is the device side's, which
# clang defines there; the rest guard nothing in the toolkit's headers.
MACROS_LEFT_OUT = {"__NVCC__", "__CUDA_ARCH__", "__NVCC_DIAG_PRAGMA_SUPPORT__",
                   "__CUDACC_DEVICE_ATOMIC_BUILTINS__",
                   "CUDA_DOUBLE_MATH_FUNCTIONS"}


def nvcc_macros(nvcc, arch):
    """The macros nvcc defines for its preprocessing, from --dryrun."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "empty.cu")
        open(src, "w").close()
        run = subprocess.run([nvcc, "-arch=" + arch, "-c", src, "--dryrun"],
                             capture_output=True, text=True)
    return sorted(set(re.findall(r"\s-D([A-Za-z_]\w*)(?:=(\S*))?",
                                 run.stderr)))


def macro_probes(nvcc, arch, version):
    """A file that parses only if every macro nvcc predefines (but those
    left out on purpose) is defined."""
    out = ["// Generated by passes/nvcc/gen_intrinsics.py --macros from nvcc "
           "%s (%s):" % (version, arch),
           "// the macros nvcc predefines, which the parse defines too."]
    for m, value in nvcc_macros(nvcc, arch):
        if m in MACROS_LEFT_OUT:
            continue
        out += ["#ifndef " + m,
                "#error \"nvcc predefines %s; the parse does not\"" % m]
        # The build number is nvcc's own, which no header tells.
        if value.isdigit() and m != "__CUDACC_VER_BUILD__":
            out += ["#elif %s != %s" % (m, value),
                    "#error \"nvcc defines %s as %s\"" % (m, value)]
        out.append("#endif")
    return "\n".join(out) + "\n"


# What a program may include; the host side of each, preprocessed by nvcc
# and by the parse, must declare the same enumerators.
ENUM_HEADERS = ["cuda_runtime.h", "cuda.h", "cooperative_groups.h",
                "cooperative_groups/reduce.h",
                "cooperative_groups/memcpy_async.h", "cuda_fp16.h",
                "cuda_bf16.h", "cuda_pipeline.h", "cuda_awbarrier.h",
                "mma.h"]
ENUM = re.compile(r"\benum\b(?:\s+(?:class|struct))?[\s\w:]*\{([^{}]*)\}")


def toolkit_text(text, include, compat=None):
    """The preprocessed text that came from the toolkit's own headers in
    \p include (and the compatibility header), not from cccl and its
    nv/target (which support clang in their own ways: traits as builtins
    where nvcc's branch has class-scope enums, NV_IF_TARGET without the
    NV::sm_* enumerators) or the C++ library."""
    include = os.path.realpath(include) + os.sep
    cccl = (os.path.join(include, "cccl") + os.sep,
            os.path.join(include, "nv") + os.sep)
    compat = os.path.realpath(compat) if compat else None
    keep, out, known = False, [], {}
    for chunk in re.split(r'^(# \d+ "[^"]*".*)$', text, flags=re.M):
        m = re.match(r'# \d+ "([^"]*)"', chunk)
        if m:
            path = m.group(1)
            if path not in known:
                real = os.path.realpath(path)
                known[path] = real == compat or (
                    real.startswith(include) and not real.startswith(cccl))
            keep = known[path]
            continue
        if keep:
            out.append(chunk)
    return "\n".join(out)


def enumerators(text, include, compat=None):
    names = set()
    for body in ENUM.findall(toolkit_text(text, include, compat)):
        for item in body.split(","):
            m = re.match(r"\s*([A-Za-z_]\w*)", item)
            if m:
                names.add(m.group(1))
    return names


def compare_enums(args):
    """Enumerators nvcc's host preprocessing sees and the parse's does not
    (both sides' are compared with the same headers)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "headers.cu")
        with open(src, "w") as f:
            for h in ENUM_HEADERS:
                if os.path.exists(os.path.join(args.cuda_path, "include", h)):
                    f.write("#include <%s>\n" % h)
        # nvcc's own host preprocessing command, from --dryrun.
        run = subprocess.run([args.nvcc, "-arch=" + args.arch, "-c", src,
                              "-o", os.path.join(tmp, "x.o"), "--dryrun"],
                             capture_output=True, text=True)
        host = [l[3:] for l in run.stderr.splitlines()
                if l.startswith("#$ gcc") and " -E " in l
                and "-D__CUDA_ARCH__=" not in l]
        if not host:
            sys.exit("gen_intrinsics: no host preprocessing in nvcc --dryrun")
        nvcc_out = os.path.join(tmp, "nvcc.ii")
        cmd = re.sub(r' -o "[^"]*"', ' -o "%s"' % nvcc_out, host[0])
        subprocess.run(cmd, shell=True, check=True, cwd=tmp)
        # The parse: clang's wrapper, the macros nvcc predefines but those
        # left out (the --macros check holds the parse to them), the
        # compatibility header.
        tool_out = os.path.join(tmp, "tool.ii")
        cmd = [args.clang, "-x", "cuda", "--cuda-host-only",
               "--cuda-gpu-arch=" + args.arch, "--cuda-path=" + args.cuda_path,
               "-Wno-unknown-cuda-version", "-isystem",
               os.path.join(args.cuda_path, "include", "cccl"), "-E", "-o",
               tool_out]
        for m, value in nvcc_macros(args.nvcc, args.arch):
            if m not in MACROS_LEFT_OUT:
                cmd.append("-D%s=%s" % (m, value) if value else "-D" + m)
        if args.resource_dir:
            cmd.append("-resource-dir=" + args.resource_dir)
        if args.compat:
            cmd += ["-include", args.compat]
        subprocess.run(cmd + [src], check=True)
        include = os.path.join(args.cuda_path, "include")
        return sorted(
            enumerators(open(nvcc_out, errors="replace").read(), include) -
            enumerators(open(tool_out, errors="replace").read(), include,
                        args.compat))


def toolkit_version(cuda_path):
    text = open(os.path.join(cuda_path, "include", "cuda_runtime_api.h")).read()
    m = re.search(r"#define CUDART_VERSION\s+(\d+)", text)
    v = int(m.group(1)) if m else 0
    return "%d.%d" % (v // 1000, v % 1000 // 10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuda-path", default="/usr/local/cuda")
    ap.add_argument("--nvcc", help="drop the probes this nvcc refuses")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--list", action="store_true",
                    help="print name(types) per overload instead")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--clang", default="clang++-22",
                    help="the clang the tool links, for --gaps")
    ap.add_argument("--resource-dir", help="its resource dir, for --gaps")
    ap.add_argument("--compat", help="the compatibility header the parse "
                    "pre-includes, for --gaps")
    ap.add_argument("--gaps", action="store_true",
                    help="print the overloads the parse lacks, as "
                    "declarations")
    ap.add_argument("--update-compat", metavar="HEADER",
                    help="declare every overload the parse lacks (without "
                    "the header's own generated block) in HEADER's block")
    ap.add_argument("--macros", action="store_true",
                    help="write a file that checks the macros nvcc "
                    "predefines instead (needs --nvcc)")
    ap.add_argument("--compare-enums", action="store_true",
                    help="print the enumerators nvcc's host preprocessing "
                    "of the toolkit's headers declares and the parse's does "
                    "not (needs --nvcc; exit 1 if any)")
    args = ap.parse_args()
    version = toolkit_version(args.cuda_path)
    if args.compare_enums:
        if not args.nvcc:
            ap.error("--compare-enums needs --nvcc")
        missing = compare_enums(args)
        for name in missing:
            print("nvcc declares enumerator %s; the parse does not" % name)
        sys.exit(1 if missing else 0)
    if args.macros:
        if not args.nvcc:
            ap.error("--macros needs --nvcc")
        text = macro_probes(args.nvcc, args.arch, version)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            open(args.output, "w").write(text)
        return
    decls = declarations(args.cuda_path)
    if args.nvcc:
        decls = nvcc_filter(decls, args.nvcc, args.arch, version)
    if args.update_compat:
        # What the parse lacks with the header's hand-written part only.
        with tempfile.TemporaryDirectory() as tmp:
            text = open(args.update_compat).read()
            if BEGIN in text:
                head, rest = text.split(BEGIN, 1)
                text = head + rest.split(END, 1)[1]
            args.compat = os.path.join(tmp, "nvcc_compat.h")
            open(args.compat, "w").write(text)
            missing = gaps(decls, args, version)
        update_compat(args.update_compat, missing, version, args.arch)
        print("gen_intrinsics: %d of %d overloads declared in %s" %
              (len(missing), len(decls), args.update_compat))
        return
    if args.gaps:
        sys.stdout.write(compat_block(gaps(decls, args, version), version,
                                      args.arch))
        return
    if args.list:
        for name, types, returns in decls:
            print("%s %s(%s)" % (returns, name, ", ".join(types)))
        return
    if args.output == "-":
        sys.stdout.write(PRELUDE.format(version=version, arch=args.arch))
        for i, (name, types, _) in enumerate(decls):
            sys.stdout.write(probe(i, name, types))
    else:
        write(args.output, decls, version, args.arch)


if __name__ == "__main__":
    main()
