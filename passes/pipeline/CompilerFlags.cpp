#include "pipeline/CompilerFlags.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace clang::tooling;

namespace smpart {

static bool isNvcc(llvm::StringRef Program) {
  return llvm::sys::path::filename(Program).starts_with("nvcc");
}

/// `sm_90` from `-arch=sm_90`, `compute_90`, `arch=compute_90,code=sm_90`.
static std::string archOf(llvm::StringRef Value) {
  size_t Pos = Value.rfind("sm_");
  if (Pos == llvm::StringRef::npos)
    Pos = Value.rfind("compute_");
  if (Pos == llvm::StringRef::npos)
    return {};
  llvm::StringRef Arch = Value.substr(Pos);
  Arch = Arch.take_while([](char C) { return C != ',' && C != ']'; });
  if (Arch.consume_front("compute_"))
    return ("sm_" + Arch).str();
  return Arch.str();
}

std::vector<std::string>
translateNvccArgs(const std::vector<std::string> &Args) {
  if (Args.empty() || !isNvcc(Args[0]))
    return Args;
  // nvcc flags with a separate value that clang has no use for.
  static const llvm::StringSet<> DropWithValue = {
      "-Xptxas", "-Xnvlink", "-Xlinker", "-ccbin", "--compiler-bindir",
      "-maxrregcount", "--maxrregcount", "-t", "--threads", "-Werror",
      "--Werror", "-Xarchive", "--diag-suppress", "-diag-suppress",
      "--generate-line-info", "-rdc", "--relocatable-device-code", "-cudart",
      "--cudart", "-x"};
  static const llvm::StringSet<> Drop = {
      "--expt-relaxed-constexpr", "-expt-relaxed-constexpr",
      "--expt-extended-lambda", "-expt-extended-lambda", "--extended-lambda",
      "-extended-lambda", "-lineinfo", "--use_fast_math", "-use_fast_math",
      "-G", "--device-debug", "--keep", "-keep", "-dc", "--device-c",
      "--restrict", "-restrict", "-dlto", "--dlink-time-opt"};
  std::vector<std::string> Out{"clang++"};
  std::string Arch;
  for (size_t I = 1; I < Args.size(); ++I) {
    llvm::StringRef A = Args[I];
    auto Value = [&]() -> std::string {
      return I + 1 < Args.size() ? Args[++I] : std::string();
    };
    if (Drop.contains(A))
      continue;
    if (DropWithValue.contains(A)) {
      Value();
      continue;
    }
    auto [Flag, Joined] = A.split('=');
    if (!Joined.empty() && (DropWithValue.contains(Flag) || Drop.contains(Flag)))
      continue;
    if (Flag == "-arch" || Flag == "--gpu-architecture" || Flag == "-code" ||
        Flag == "--gpu-code" || Flag == "-gencode" ||
        Flag == "--generate-code") {
      std::string V = Joined.empty() ? Value() : Joined.str();
      if (Arch.empty())
        Arch = archOf(V);
      continue;
    }
    if (Flag == "-Xcompiler" || Flag == "--compiler-options") {
      std::string V = Joined.empty() ? Value() : Joined.str();
      llvm::SmallVector<llvm::StringRef, 4> Parts;
      llvm::StringRef(V).split(Parts, ',', -1, false);
      for (llvm::StringRef P : Parts)
        Out.push_back(P.str());
      continue;
    }
    if (Flag == "--std")
      Out.push_back("-std=" + Joined.str());
    else if (Flag == "--include-path" || Flag == "--define-macro")
      Out.push_back((Flag == "--include-path" ? "-I" : "-D") +
                    (Joined.empty() ? Value() : Joined.str()));
    else
      Out.push_back(A.str());
  }
  if (!Arch.empty() && Arch != "sm_all" && Arch != "sm_native")
    Out.insert(Out.begin() + 1, "--cuda-gpu-arch=" + Arch);
  return Out;
}

ArgumentsAdjuster cudaAdjuster(const CudaSetup &Setup, bool DeviceSide) {
  return [Setup, DeviceSide](const CommandLineArguments &In,
                             llvm::StringRef) {
    CommandLineArguments Args = translateNvccArgs(In);
    CommandLineArguments Out;
    bool HasCudaPath = false;
    std::string Arch;
    for (size_t I = 0; I < Args.size(); ++I) {
      llvm::StringRef A = Args[I];
      // One side per parse, and one GPU arch (one device job).
      if (A == "--cuda-host-only" || A == "--cuda-device-only" ||
          A == "--cuda-compile-host-device")
        continue;
      if (A.consume_front("--cuda-gpu-arch=") ||
          A.consume_front("--offload-arch=")) {
        if (Arch.empty())
          Arch = A.str();
        continue;
      }
      if (A == "-x" && I + 1 < Args.size()) { // we set the language
        ++I;
        continue;
      }
      HasCudaPath |= A.starts_with("--cuda-path");
      Out.push_back(Args[I]);
    }
    if (Arch.empty())
      Arch = Setup.GpuArch;
    CommandLineArguments Front = {
        "-x", "cuda",
        "--cuda-gpu-arch=" + Arch,
        DeviceSide ? "--cuda-device-only" : "--cuda-host-only",
        "-Wno-unknown-cuda-version",
        "-resource-dir=" + Setup.ResourceDir};
    if (!HasCudaPath) {
      Front.push_back("--cuda-path=" + Setup.CudaPath);
      std::string Cccl = Setup.CudaPath + "/include/cccl";
      if (llvm::sys::fs::is_directory(Cccl)) {
        Front.push_back("-isystem");
        Front.push_back(Cccl);
      }
    }
    Out.insert(Out.begin() + 1, Front.begin(), Front.end());
    // nvcc compiles host code with the host compiler, whose own headers
    // (omp.h with -fopenmp, for one) clang's resource dir lacks: searched
    // last, after clang's.
    if (!Setup.HostCompilerInclude.empty()) {
      Out.push_back("-idirafter");
      Out.push_back(Setup.HostCompilerInclude);
    }
    // Searched after the user's own directories: their copy of the
    // headers, if any, wins.
    if (!Setup.RuntimeInclude.empty()) {
      Out.push_back("-idirafter");
      Out.push_back(Setup.RuntimeInclude);
      // With the toolkit's headers, what nvcc's headers bring in.
      const bool NoCudaInc = llvm::find(Out, "-nocudainc") != Out.end();
      const std::string Compat =
          Setup.RuntimeInclude + "/smpart/detail/nvcc_compat.h";
      if (!NoCudaInc && llvm::sys::fs::exists(Compat)) {
        Out.push_back("-include");
        Out.push_back(Compat);
      }
    }
    return Out;
  };
}

std::string checkSetup(const CudaSetup &Setup, const CompilationDatabase &Db,
                       const std::vector<std::string> &Files) {
  if (!llvm::sys::fs::exists(Setup.ResourceDir +
                             "/include/__clang_cuda_runtime_wrapper.h"))
    return "clang resource directory '" + Setup.ResourceDir +
           "' has no include/__clang_cuda_runtime_wrapper.h; pass "
           "--resource-dir=<clang-22 resource dir> (e.g. "
           "/usr/lib/llvm-22/lib/clang/22)";
  bool NeedsCuda = false;
  for (const std::string &File : Files)
    for (const CompileCommand &C : Db.getCompileCommands(File))
      NeedsCuda |= llvm::find(C.CommandLine, "-nocudainc") ==
                   C.CommandLine.end();
  if (NeedsCuda &&
      !llvm::sys::fs::exists(Setup.CudaPath + "/include/cuda_runtime.h"))
    return "no CUDA installation found at '" + Setup.CudaPath +
           "' (no include/cuda_runtime.h); pass --cuda-path=<CUDA toolkit "
           "root>, or -nocudainc -nocudalib after `--` for header-free code";
  return {};
}

std::string hostCompilerInclude() {
  // GCC's private include dir, /usr/lib/gcc/<triple>/<version>/include:
  // the newest version that has omp.h.
  std::string Best;
  unsigned BestVersion = 0;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator T("/usr/lib/gcc", EC), End;
       !EC && T != End; T.increment(EC))
    for (llvm::sys::fs::directory_iterator V(T->path(), EC), VEnd;
         !EC && V != VEnd; V.increment(EC)) {
      unsigned Version = 0;
      if (llvm::StringRef(llvm::sys::path::filename(V->path()))
              .getAsInteger(10, Version))
        continue;
      const std::string Dir = V->path() + "/include";
      if (Version > BestVersion && llvm::sys::fs::exists(Dir + "/omp.h")) {
        Best = Dir;
        BestVersion = Version;
      }
    }
  return Best;
}

} // namespace smpart
