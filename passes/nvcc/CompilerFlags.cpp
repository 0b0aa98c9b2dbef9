#include "nvcc/CompilerFlags.h"

#include "clang/Basic/OffloadArch.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

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

/// Arguments of an nvcc options file: whitespace-separated, with quotes.
static std::vector<std::string> readOptionsFile(llvm::StringRef Path,
                                                llvm::StringRef Directory) {
  llvm::SmallString<256> Full(Path);
  if (!Directory.empty() && llvm::sys::path::is_relative(Path)) {
    Full = Directory;
    llvm::sys::path::append(Full, Path);
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buffer =
      llvm::MemoryBuffer::getFile(Full);
  if (!Buffer)
    return {};
  llvm::BumpPtrAllocator Alloc;
  llvm::StringSaver Saver(Alloc);
  llvm::SmallVector<const char *, 32> Tokens;
  llvm::cl::TokenizeGNUCommandLine((*Buffer)->getBuffer(), Saver, Tokens);
  return std::vector<std::string>(Tokens.begin(), Tokens.end());
}

std::vector<std::string> translateNvccArgs(const std::vector<std::string> &Args,
                                           llvm::StringRef Directory) {
  if (Args.empty())
    return Args;
  const bool Nvcc = isNvcc(Args[0]);
  // nvcc flags with a separate value that clang has no use for. Those
  // marked nvcc-only cannot be clang flags and are dropped from any
  // command; the others (-x, -t, -Werror) mean something else to clang.
  static const llvm::StringSet<> DropWithValueNvccOnly = {
      "-Xptxas",
      "-Xnvlink",
      "-ccbin",
      "--compiler-bindir",
      "-maxrregcount",
      "--maxrregcount",
      "--threads",
      "--Werror",
      "-Xarchive",
      "--diag-suppress",
      "-diag-suppress",
      "--diag_suppress",
      "-diag_suppress",
      "--diag-warn",
      "--diag-error",
      "-Xcudafe",
      "--keep-dir",
      "-keep-dir",
      "--generate-line-info",
      "-cudart",
      "--cudart",
      "--ptxas-options",
      "--nvlink-options",
      "-Xfatbin",
      "--fatbin-options",
      "-ftz",
      "--ftz",
      "-prec-div",
      "--prec-div",
      "-prec-sqrt",
      "--prec-sqrt",
      "-fmad",
      "--fmad",
      "--split-compile",
      "-split-compile",
      "--gpu-code",
      "-code",
      "-dlto",
      "--list-gpu-arch"};
  static const llvm::StringSet<> DropWithValue = {"-t", "-Werror", "-x"};
  static const llvm::StringSet<> DropNvccOnly = {
      "--expt-relaxed-constexpr",
      "-expt-relaxed-constexpr",
      "--expt-extended-lambda",
      "-expt-extended-lambda",
      "--extended-lambda",
      "-extended-lambda",
      "-lineinfo",
      "--use_fast_math",
      "-use_fast_math",
      "--device-debug",
      "--keep",
      "-keep",
      "--restrict",
      "-restrict",
      "--dlink-time-opt",
      "-forward-unknown-to-host-compiler",
      "--forward-unknown-to-host-compiler",
      "-forward-unknown-to-host-linker",
      "--forward-unknown-to-host-linker",
      "--forward-unknown-opts",
      "-forward-unknown-opts",
      "-Wno-deprecated-gpu-targets",
      "--Wno-deprecated-gpu-targets",
      "--no-host-device-initializer-list",
      "--no-host-device-move-forward",
      "--display-error-number",
      "--no-display-error-number",
      "-static-global-template-stub",
      "--static-global-template-stub",
      "--source-in-ptx",
      "-src-in-ptx",
      "-Wreorder",
      "--resource-usage",
      "-res-usage",
      "-dlink",
      "--device-link",
      "--extensible-whole-program",
      "-ewp"};
  static const llvm::StringSet<> Drop = {"-G"};
  auto IsDroppedWithValue = [&](llvm::StringRef F) {
    return DropWithValueNvccOnly.contains(F) ||
           (Nvcc && DropWithValue.contains(F));
  };
  auto IsDropped = [&](llvm::StringRef F) {
    return DropNvccOnly.contains(F) || (Nvcc && Drop.contains(F));
  };
  std::vector<std::string> Out{Nvcc ? "clang++" : Args[0]};
  std::string Arch;
  // Separate compilation (-rdc=true, -dc): clang's -fgpu-rdc, so that the
  // parse sees extern device code as nvcc does.
  bool Rdc = false;
  // Worklist so that options files expand in place.
  std::vector<std::string> Work(Args.begin() + 1, Args.end());
  for (size_t I = 0; I < Work.size(); ++I) {
    llvm::StringRef A = Work[I];
    // Inputs only from here on (clang's inferred commands put the file
    // after `--`).
    if (A == "--") {
      Out.insert(Out.end(), Work.begin() + I, Work.end());
      break;
    }
    auto Value = [&]() -> std::string {
      return I + 1 < Work.size() ? Work[++I] : std::string();
    };
    auto [Flag, Joined] = A.split('=');
    // A response file (`@F`, GNU quoting) reads like an options file.
    const bool Response = A.starts_with("@") && A.size() > 1;
    if (Response || Flag == "--options-file" || Flag == "-optf") {
      std::string File = Response         ? A.drop_front().str()
                         : Joined.empty() ? Value()
                                          : Joined.str();
      std::vector<std::string> More = readOptionsFile(File, Directory);
      if (More.empty()) // keep it: clang then reports the unreadable file
        Out.push_back("@" + File);
      Work.insert(Work.begin() + I + 1, More.begin(), More.end());
      continue;
    }
    if (IsDropped(A))
      continue;
    if (IsDroppedWithValue(A)) {
      Value();
      continue;
    }
    if (!Joined.empty() && (IsDroppedWithValue(Flag) || IsDropped(Flag)))
      continue;
    // `-arch sm_80` (two words) is also a Darwin clang flag: translate it
    // only when its value is a GPU arch.
    bool ArchFlag = Flag == "--gpu-architecture" || Flag == "-gencode" ||
                    Flag == "--generate-code" ||
                    (Flag == "-arch" && (Nvcc || !Joined.empty()));
    if (Flag == "-arch" && Joined.empty() && !Nvcc && I + 1 < Work.size() &&
        !archOf(Work[I + 1]).empty())
      ArchFlag = true;
    if (ArchFlag) {
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
    if (Flag == "-rdc" || Flag == "--relocatable-device-code") {
      const std::string V = Joined.empty() ? Value() : Joined.str();
      Rdc = V == "true";
      continue;
    }
    if ((Nvcc && A == "-dc") || A == "--device-c") {
      Rdc = true;
      Out.push_back("-c");
      continue;
    }
    if (Flag == "--default-stream" || Flag == "-default-stream") {
      std::string V = Joined.empty() ? Value() : Joined.str();
      Out.push_back("-fgpu-default-stream=" + V);
      continue;
    }
    if (Nvcc && Flag == "--std")
      Out.push_back("-std=" + Joined.str());
    else if (Flag == "--include-path" || Flag == "--define-macro" ||
             (Nvcc && (Flag == "--undefine-macro" || Flag == "--pre-include" ||
                       Flag == "--system-include")))
      Out.push_back((Flag == "--include-path"     ? "-I"
                     : Flag == "--define-macro"   ? "-D"
                     : Flag == "--undefine-macro" ? "-U"
                     : Flag == "--pre-include"    ? "-include"
                                                  : "-isystem") +
                    (Joined.empty() ? Value() : Joined.str()));
    else
      Out.push_back(A.str());
  }
  if (Rdc)
    Out.insert(Out.begin() + 1, "-fgpu-rdc");
  if (!Arch.empty() && Arch != "sm_all" && Arch != "sm_native")
    Out.insert(Out.begin() + 1, "--cuda-gpu-arch=" + Arch);
  return Out;
}

namespace {

/// Notes, once per file, which entry clang borrowed a command from.
class BorrowNotingDatabase : public CompilationDatabase {
public:
  explicit BorrowNotingDatabase(std::unique_ptr<CompilationDatabase> Inner)
      : Inner(std::move(Inner)) {}
  std::vector<CompileCommand>
  getCompileCommands(llvm::StringRef File) const override {
    // The JSON database matches entries by absolute path: 'src/k.cu' as
    // the user spells it would miss its own entry and borrow another.
    std::vector<CompileCommand> Commands =
        Inner->getCompileCommands(absolute(File));
    for (const CompileCommand &C : Commands) {
      llvm::StringRef Heuristic = C.Heuristic;
      if (!Heuristic.consume_front("inferred from "))
        continue;
      // The borrowed entry's file, relative to its own directory.
      llvm::SmallString<256> From(Heuristic);
      if (llvm::sys::path::is_relative(From)) {
        From = C.Directory;
        llvm::sys::path::append(From, Heuristic);
      }
      std::lock_guard<std::mutex> Lock(Mutex);
      if (Noted.insert(absolute(File)).second)
        llvm::errs() << "smpart-transform: '" << shown(File)
                     << "' is not in compile_commands.json; using the "
                        "command of '"
                     << shown(From) << "'\n";
    }
    return Commands;
  }
  std::vector<std::string> getAllFiles() const override {
    return Inner->getAllFiles();
  }
  std::vector<CompileCommand> getAllCompileCommands() const override {
    return Inner->getAllCompileCommands();
  }

private:
  static std::string absolute(llvm::StringRef Path) {
    llvm::SmallString<256> Abs(Path);
    llvm::sys::fs::make_absolute(Abs);
    llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    return std::string(Abs);
  }
  /// Relative to the working directory when under it, as users name files.
  static std::string shown(llvm::StringRef Path) {
    std::string Abs = absolute(Path);
    llvm::SmallString<256> Cwd;
    if (llvm::sys::fs::current_path(Cwd))
      return Abs;
    llvm::StringRef Rel = Abs;
    if (Rel.consume_front(Cwd) && Rel.consume_front("/"))
      return Rel.str();
    return Abs;
  }

  std::unique_ptr<CompilationDatabase> Inner;
  mutable std::mutex Mutex;
  mutable llvm::StringSet<> Noted;
};

} // namespace

/// What is wrong with the compile_commands.json at \p Path, naming the
/// entry and the key (clang's loader says only "Expected array."), or
/// empty.
static std::string databaseProblem(llvm::StringRef Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer)
    return Buffer.getError().message();
  llvm::Expected<llvm::json::Value> Doc =
      llvm::json::parse((*Buffer)->getBuffer());
  if (!Doc)
    return "not JSON: " + llvm::toString(Doc.takeError());
  const llvm::json::Array *Entries = Doc->getAsArray();
  if (!Entries)
    return "expected an array of compile commands";
  for (std::size_t I = 0; I < Entries->size(); ++I) {
    const std::string At = "[" + std::to_string(I) + "]";
    const llvm::json::Object *E = (*Entries)[I].getAsObject();
    if (!E)
      return At + ": expected an object with directory, file and command "
                  "or arguments";
    for (llvm::StringRef Key : {"directory", "file"})
      if (!E->getString(Key) || E->getString(Key)->empty())
        return At + "." + Key.str() + ": expected a non-empty string";
    const llvm::json::Array *Args = E->getArray("arguments");
    if (E->get("arguments") &&
        (!Args || Args->empty() ||
         llvm::any_of(*Args, [](const auto &A) { return !A.getAsString(); })))
      return At + ".arguments: expected a non-empty array of strings";
    if (E->get("command") &&
        (!E->getString("command") || E->getString("command")->trim().empty()))
      return At + ".command: expected a non-empty string";
    if (!Args && !E->get("command"))
      return At + ": expected a command or arguments";
  }
  return {};
}

std::unique_ptr<CompilationDatabase>
loadProjectDatabase(llvm::StringRef BuildPath, std::string &Error) {
  Error.clear();
  llvm::SmallString<256> Dir(BuildPath);
  llvm::sys::fs::make_absolute(Dir);
  llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  for (llvm::StringRef D = Dir; !D.empty();
       D = llvm::sys::path::parent_path(D)) {
    llvm::SmallString<256> Json(D);
    llvm::sys::path::append(Json, "compile_commands.json");
    if (llvm::sys::fs::exists(Json)) {
      if (std::string Why = databaseProblem(Json); !Why.empty()) {
        Error = "'" + Json.str().str() + "': " + Why;
        return nullptr;
      }
      std::unique_ptr<CompilationDatabase> Db =
          JSONCompilationDatabase::loadFromFile(
              Json, Error, JSONCommandLineSyntax::AutoDetect);
      if (!Db)
        return nullptr;
      // What clang's own JSON loader does, with the translation before
      // the inference.
      Db = expandResponseFiles(std::move(Db), llvm::vfs::getRealFileSystem());
      Db = std::make_unique<NvccTranslatingDatabase>(std::move(Db));
      Db = inferTargetAndDriverMode(inferMissingCompileCommands(std::move(Db)));
      return std::make_unique<BorrowNotingDatabase>(std::move(Db));
    }
    llvm::SmallString<256> Flags(D);
    llvm::sys::path::append(Flags, "compile_flags.txt");
    if (llvm::sys::fs::exists(Flags))
      return FixedCompilationDatabase::loadFromFile(Flags, Error);
  }
  return nullptr;
}

std::vector<CompileCommand>
NvccTranslatingDatabase::getCompileCommands(llvm::StringRef File) const {
  std::vector<CompileCommand> Commands = Inner.getCompileCommands(File);
  for (CompileCommand &C : Commands)
    C.CommandLine = translateNvccArgs(C.CommandLine, C.Directory);
  return Commands;
}

std::vector<CompileCommand>
NvccTranslatingDatabase::getAllCompileCommands() const {
  std::vector<CompileCommand> Commands = Inner.getAllCompileCommands();
  for (CompileCommand &C : Commands)
    C.CommandLine = translateNvccArgs(C.CommandLine, C.Directory);
  return Commands;
}

/// CUDA_VERSION of the toolkit's cuda.h (13000 for 13.0), or 0.
static unsigned toolkitVersion(const std::string &CudaPath) {
  static std::mutex Mutex;
  static llvm::StringMap<unsigned> Known;
  std::lock_guard<std::mutex> Lock(Mutex);
  auto [It, New] = Known.try_emplace(CudaPath, 0);
  if (!New)
    return It->second;
  // The define is near the top of a large file.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Head =
      llvm::MemoryBuffer::getFileSlice(CudaPath + "/include/cuda.h", 1 << 16,
                                       0);
  if (!Head)
    return 0;
  llvm::StringRef Text = (*Head)->getBuffer();
  size_t At = Text.find("#define CUDA_VERSION ");
  if (At == llvm::StringRef::npos)
    return 0;
  Text.substr(At + 21).take_while(llvm::isDigit).getAsInteger(10, It->second);
  return It->second;
}

std::vector<std::string> nvccMacros(const std::string &CudaPath) {
  // Not __NVCC__: cccl and cooperative groups take it to mean that
  // nvcc's builtins exist, and clang's parse would then fail in them.
  std::vector<std::string> Macros = {"-D_CG_CLUSTER_INTRINSICS_AVAILABLE"};
  if (unsigned V = toolkitVersion(CudaPath)) {
    const std::string Major = std::to_string(V / 1000);
    const std::string Minor = std::to_string(V % 1000 / 10);
    Macros.insert(Macros.end(), {"-D__CUDACC_VER_MAJOR__=" + Major,
                                 "-D__CUDACC_VER_MINOR__=" + Minor,
                                 "-D__CUDACC_VER_BUILD__=0",
                                 "-D__CUDA_API_VER_MAJOR__=" + Major,
                                 "-D__CUDA_API_VER_MINOR__=" + Minor});
  }
  return Macros;
}

ArgumentsAdjuster cudaAdjuster(const CudaSetup &Setup, bool DeviceSide) {
  return [Setup, DeviceSide](const CommandLineArguments &In, llvm::StringRef) {
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
        // The first of a list; `native` needs a GPU to resolve: the
        // default stands in.
        if (llvm::StringRef First = A.split(',').first;
            Arch.empty() && First != "native")
          Arch = First.str();
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
    CommandLineArguments Front = {"-x",
                                  "cuda",
                                  "--cuda-gpu-arch=" + Arch,
                                  DeviceSide ? "--cuda-device-only"
                                             : "--cuda-host-only",
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
    // Flags go before a `--` (inferred commands have one before the file),
    // after which everything is an input.
    CommandLineArguments Inputs;
    if (auto DD = llvm::find(Out, "--"); DD != Out.end()) {
      Inputs.assign(DD, Out.end());
      Out.erase(DD, Out.end());
    }
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
    }
    // With the toolkit's headers, what nvcc's headers declare and clang's
    // wrapper does not.
    const bool NoCudaInc = llvm::find(Out, "-nocudainc") != Out.end();
    if (!NoCudaInc) {
      std::vector<std::string> Macros = nvccMacros(Setup.CudaPath);
      Out.insert(Out.end(), Macros.begin(), Macros.end());
    }
    if (!NoCudaInc && !Setup.CompatHeader.empty()) {
      Out.push_back("-include");
      Out.push_back(Setup.CompatHeader);
    }
    Out.insert(Out.end(), Inputs.begin(), Inputs.end());
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
    for (const CompileCommand &C : Db.getCompileCommands(File)) {
      NeedsCuda |=
          llvm::find(C.CommandLine, "-nocudainc") == C.CommandLine.end();
      // An architecture clang does not know fails the driver, which then
      // parses the file as plain C++: a hundred errors after the one that
      // matters.
      for (llvm::StringRef A : C.CommandLine) {
        llvm::StringRef Archs = A;
        if (!Archs.consume_front("--cuda-gpu-arch=") &&
            !Archs.consume_front("--offload-arch="))
          continue;
        llvm::SmallVector<llvm::StringRef, 4> List;
        Archs.split(List, ',');
        for (llvm::StringRef Arch : List)
          if (Arch != "native" &&
              clang::StringToOffloadArch(Arch) == clang::OffloadArch::UNKNOWN)
            return "'" + File + "': unsupported GPU architecture '" +
                   Arch.str() + "' (clang 22 knows sm_50 to sm_121a)";
      }
    }
  if (NeedsCuda &&
      !llvm::sys::fs::exists(Setup.CudaPath + "/include/cuda_runtime.h"))
    return "no CUDA installation found at '" + Setup.CudaPath +
           "' (no include/cuda_runtime.h); pass --cuda-path=<CUDA toolkit "
           "root>, or -nocudainc -nocudalib after `--` for header-free code";
  return {};
}

std::string nvccCompatHeader(const char *Argv0) {
  static int Anchor;
  llvm::SmallString<256> Installed(llvm::sys::path::parent_path(
      llvm::sys::fs::getMainExecutable(Argv0, &Anchor)));
  llvm::sys::path::append(Installed, SMPART_NVCC_INSTALLED_INCLUDE,
                          "nvcc_compat.h");
  llvm::sys::path::remove_dots(Installed, /*remove_dot_dot=*/true);
  if (llvm::sys::fs::exists(Installed))
    return std::string(Installed);
  const std::string Source = SMPART_NVCC_SOURCE_INCLUDE "/nvcc_compat.h";
  if (llvm::sys::fs::exists(Source))
    return Source;
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
