// smpart-transform: rewrites CUDA kernels into persistent-thread,
// preemptible, SM-restricted form. Options and dispatch only; the work is
// in passes/.
#include "nvcc/CompilerFlags.h"
#include "pipeline/TransformPipeline.h"

#include "clang/Basic/OffloadArch.h"
#include "clang/Basic/Version.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory Category("smpart-transform options");

static cl::extrahelp MoreHelp(R"(
Compile commands:
  Without -p or `--`, each file is parsed with the tool's own CUDA flags
  only. `-- <args>` gives the compile flags of every file (clang or nvcc
  spelling: -arch=sm_80, -Xcompiler, --options-file are understood).
  -p <dir> reads compile_commands.json from <dir> or its nearest parent
  that has one (nvcc entries of CMake's Ninja and Makefiles generators
  included); with none, a note, and the files are parsed with no project
  flags. A database that cannot be read is an error naming the entry.
  --compile-args-file=<file> appends one argument per line after `--`.

Each __global__ function of the input (and of headers matched by
--header-filter) becomes a persistent kernel whose CTAs take logical blocks
from a device counter, yield on preemption, stay on the SMs of their mask and
tag L1-bypassing CTAs; each host <<<...>>> launch of such a kernel becomes a
call of smpart::launchRewritten. Compile the output with
-I<smpart>/runtime/include
and link libsmpart. Kernels that cannot be transformed are left unchanged
with a warning "smpart: kernel 'K' not transformed: <reason>".

Exit status:
  0  every file parsed and its output was written (refused kernels are
     warnings unless --refusals-as-errors)
  1  the job failed: a file did not parse (any error line), an output
     could not be written, a refusal under --refusals-as-errors, no CUDA
     installation, a broken compilation database
  2  bad usage: an unknown option, a bad or missing value, no input file,
     options that exclude each other (an error line and
     "see 'smpart-transform --help'")

Examples:
  smpart-transform saxpy.cu -o saxpy.smpart.cu -- -I include
  smpart-transform -p build/ --output-dir build/smpart src/*.cu
  smpart-transform -i --manifest=kernels.json kernels.cu
  smpart-transform --diff saxpy.cu -- -I include
  smpart-transform --export-fixes=fixes.yaml saxpy.cu   # clang-apply-replacements
)");

static cl::opt<std::string> Output("o",
                                   cl::desc("Write the rewritten file here "
                                            "(one input; default stdout)"),
                                   cl::value_desc("file"), cl::cat(Category));
static cl::opt<std::string>
    OutputDir("output-dir",
              cl::desc("Write each rewritten file into this directory"),
              cl::value_desc("dir"), cl::cat(Category));
static cl::opt<bool> InPlace("i", cl::desc("Rewrite the files in place"),
                             cl::cat(Category));
static cl::opt<std::string> HeaderFilter(
    "header-filter",
    cl::desc("Regular expression of headers whose kernels are rewritten too"),
    cl::cat(Category));
static cl::opt<std::string>
    Kernels("kernels",
            cl::desc("Transform only kernels whose qualified name "
                     "matches this regular expression"),
            cl::cat(Category));
static cl::opt<std::string> ExcludeKernels(
    "exclude-kernels",
    cl::desc("Leave kernels whose qualified name matches this unchanged"),
    cl::cat(Category));
static cl::opt<smpart::KeepOriginal> KeepOriginal(
    "keep-original",
    cl::desc("Kernels that keep their original-signature definition beside "
             "the rewritten one (kernels declared or defined in another "
             "file always do)"),
    cl::values(clEnumValN(smpart::KeepOriginal::All, "all",
                          "every kernel, so that SMPART_DISABLE=1 can run "
                          "every launch unchanged (default)"),
               clEnumValN(smpart::KeepOriginal::External, "external",
                          "kernels with external linkage, which other "
                          "files may declare by hand and launch"),
               clEnumValN(smpart::KeepOriginal::Headers, "headers",
                          "only kernels declared or defined in headers")),
    cl::init(smpart::KeepOriginal::All), cl::cat(Category));
static cl::opt<bool> ConfineRefused(
    "confine-refused",
    cl::desc("Run the <<<>>> launches of kernels that cannot be transformed "
             "unchanged on the SMs of their partition (smpart::confined), "
             "so that a plan holds them too; unconfined where the GPU has no "
             "green contexts (default: true)"),
    cl::init(true), cl::cat(Category));
static cl::opt<std::string>
    Manifest("manifest", cl::desc("Write the JSON kernel manifest here"),
             cl::value_desc("file.json"), cl::cat(Category));
static cl::opt<std::string> CudaPath("cuda-path", cl::desc("CUDA toolkit root"),
                                     cl::init("/usr/local/cuda"),
                                     cl::cat(Category));
static cl::opt<std::string>
    GpuArch("cuda-gpu-arch",
            cl::desc("GPU arch of the device-side parse when the compile "
                     "command names none"),
            cl::init("sm_90"), cl::cat(Category));
static cl::opt<std::string>
    ResourceDir("resource-dir",
                cl::desc("Clang resource directory (CUDA wrapper headers)"),
                cl::init(SMPART_CLANG_RESOURCE_DIR), cl::cat(Category));
static cl::opt<std::string> RuntimeInclude(
    "runtime-include",
    cl::desc("smpart's runtime headers, for files an earlier run rewrote "
             "(default: the build's runtime/include, else <exe>/../include)"),
    cl::init(SMPART_RUNTIME_INCLUDE_DIR), cl::cat(Category));
static cl::opt<std::string>
    DepFile("depfile",
            cl::desc("Write a Makefile rule naming every file the parse read "
                     "(like -MD), so a build re-runs the rewrite when a header "
                     "changes"),
            cl::value_desc("file.d"), cl::cat(Category));
static cl::opt<std::string> CompileArgsFile(
    "compile-args-file",
    cl::desc("Compile arguments, one per line (no quoting), appended "
             "after `--`"),
    cl::value_desc("file"), cl::cat(Category));
static cl::opt<std::string> ExportFixes(
    "export-fixes",
    cl::desc("Write the rewrite as replacements in clang-apply-replacements' "
             "YAML format"),
    cl::value_desc("file.yaml"), cl::cat(Category));
static cl::opt<bool>
    Diff("diff",
         cl::desc("Dry run: print a unified diff of what would "
                  "change and write no rewritten file"),
         cl::cat(Category));
static cl::opt<bool> UseColor(
    "use-color",
    cl::desc("Colours and source snippets in diagnostics (default: when "
             "standard error is a terminal)"),
    cl::cat(Category));
static cl::opt<bool> RefusalsAreErrors(
    "refusals-as-errors",
    cl::desc("Treat a kernel that cannot be transformed as an error "
             "(exit 1, no rewritten file written; the manifest still is)"),
    cl::cat(Category));

/// Bad usage: LLVM's messages (or ours), then one hint line; exit 2, like
/// smpart's other binaries (tool/common/README.md).
static int usageError(StringRef Message) {
  SmallVector<StringRef, 4> Lines;
  Message.rtrim("\n").split(Lines, '\n');
  const bool Unknown = llvm::any_of(
      Lines, [](StringRef L) { return L.contains("Unknown command line"); });
  for (StringRef L : Lines) {
    // llvm::cl takes a single-letter option as a group: "--out" is first
    // read as "-o" + "ut" and reported as "for the -o option: may not
    // occur within a group!" before the real problem, the unknown option.
    if (Unknown && L.ends_with("may not occur within a group!"))
      continue;
    // The hint comes once, on its own line.
    if (size_t Try = L.find("  Try: '"); Try != StringRef::npos)
      L = L.take_front(Try);
    if (size_t See = L.find(": See: "); See != StringRef::npos)
      L = L.take_front(See);
    if (!L.trim().empty())
      errs() << L << "\n";
  }
  errs() << "smpart-transform: see 'smpart-transform --help'\n";
  return 2;
}

/// An unknown option that starts with the letter of -o or -p ("--out",
/// "--output") is read by llvm::cl as that option in a group and reported
/// as "for the -o option: may not occur within a group!". Such options are
/// answered here, before the parse, as the unknown options they are.
static std::optional<int> rejectGroupLookalikes(ArrayRef<const char *> Args) {
  auto &Registered = cl::getRegisteredOptions();
  // CommonOptionsParser registers its options (-p, --extra-arg,
  // --extra-arg-before) only when it parses; all three take a value.
  const StringRef ParserOptions[] = {"p", "extra-arg", "extra-arg-before"};
  auto TakesValue = [&](StringRef Name) {
    if (llvm::is_contained(ParserOptions, Name))
      return true;
    cl::Option *O = Registered.lookup(Name);
    return O && O->getValueExpectedFlag() == cl::ValueRequired;
  };
  for (size_t I = 1; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A == "--")
      break;
    if (!A.starts_with("-") || A == "-")
      continue;
    StringRef Name = A.ltrim('-').split('=').first;
    if (Registered.contains(Name) || llvm::is_contained(ParserOptions, Name)) {
      // Its value is the next argument unless given with '='.
      if (TakesValue(Name) && !A.contains('='))
        ++I;
      continue;
    }
    if (Name.empty() || !TakesValue(Name.take_front(1)))
      continue; // llvm::cl's own message is right
    SmallVector<StringRef, 64> Candidates(std::begin(ParserOptions),
                                          std::end(ParserOptions));
    for (auto &Entry : Registered)
      if (Entry.second->getOptionHiddenFlag() == cl::NotHidden)
        Candidates.push_back(Entry.first);
    StringRef Best = Name.take_front(1);
    unsigned BestDistance = 3; // a typo is at most two edits away
    for (StringRef C : Candidates)
      if (unsigned D = Name.edit_distance(C); D < BestDistance) {
        BestDistance = D;
        Best = C;
      }
    return usageError(("smpart-transform: error: unknown option '" +
                       A.split('=').first + "'; did you mean '" +
                       (Best.size() == 1 ? "-" : "--") + Best + "'?")
                          .str());
  }
  return std::nullopt;
}

static void printVersion(raw_ostream &OS) {
  OS << "smpart-transform version " << SMPART_VERSION << "\n"
     << "  built with " << clang::getClangFullVersion() << "\n";
}

/// nvcc flags after `--` are translated before clang's parser sees them:
/// it takes the value of a flag it does not know (`-gencode arch=...`,
/// `--options-file F`) for an input file, and drops it. \p Args then point
/// into \p Flags. An exit status if an options file cannot be read.
static std::optional<int>
translateFlagsAfterDashDash(std::vector<const char *> &Args,
                            std::vector<std::string> &Flags) {
  auto Separator =
      llvm::find_if(Args, [](const char *A) { return StringRef(A) == "--"; });
  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);
  Flags = {"clang++"};
  Flags.insert(Flags.end(), std::next(Separator), Args.end());
  Flags = smpart::translateNvccArgs(Flags, Cwd);
  for (const std::string &F : Flags)
    if (StringRef(F).starts_with("@")) {
      if (F.size() == 1)
        return usageError("smpart-transform: error: an options file flag "
                          "after `--` (--options-file, -optf) names no file");
      errs() << "smpart-transform: error: cannot read the options file '"
             << F.substr(1) << "' named after `--`\n";
      return 1;
    }
  Args.erase(std::next(Separator), Args.end());
  for (auto F = std::next(Flags.begin()); F != Flags.end(); ++F)
    Args.push_back(F->c_str());
  return std::nullopt;
}

int main(int argc, const char **argv) {
  cl::SetVersionPrinter(printVersion);
  // Without `-p` or `--`, parse with no extra flags (the tool adds the CUDA
  // ones) instead of searching for a compilation database and warning.
  std::vector<const char *> Args(argv, argv + argc);
  auto Given = [&](StringRef Flag) {
    return llvm::any_of(Args, [&](const char *A) {
      return StringRef(A) == Flag || StringRef(A).starts_with(Flag.str() + "=");
    });
  };
  // --compile-args-file: one argument per line, added after `--`, so that
  // CMake generator expressions expanding to lists (or to values with
  // spaces or quotes) arrive as whole arguments.
  std::vector<std::string> FileArgs;
  for (int I = 1; I < argc; ++I) {
    StringRef A = argv[I];
    if (A == "--")
      break;
    StringRef Path;
    if (A.consume_front("--compile-args-file=") ||
        A.consume_front("-compile-args-file="))
      Path = A;
    else if ((A == "--compile-args-file" || A == "-compile-args-file") &&
             I + 1 < argc)
      Path = argv[I + 1];
    if (Path.empty())
      continue;
    auto Buffer = MemoryBuffer::getFile(Path);
    if (!Buffer) {
      errs() << "smpart-transform: error: cannot read '" << Path
             << "': " << Buffer.getError().message() << "\n";
      return 1;
    }
    SmallVector<StringRef, 16> Lines;
    (*Buffer)->getBuffer().split(Lines, '\n', -1, false);
    for (StringRef L : Lines)
      if (!L.trim().empty())
        FileArgs.push_back(L.rtrim("\r").str());
  }
  // As --extra-arg, before any `--`, so they reach -p's commands too.
  for (std::string &A : FileArgs)
    A = "--extra-arg=" + A;
  auto DashDash =
      llvm::find_if(Args, [](const char *A) { return StringRef(A) == "--"; });
  size_t At = DashDash - Args.begin();
  for (const std::string &A : FileArgs)
    Args.insert(Args.begin() + At++, A.c_str());
  // With -p (and no `--`) the tool loads the database itself, so that nvcc
  // entries are translated before clang infers commands from them; the
  // parser then gets an empty `--`, which keeps it from loading one too.
  const bool FromDatabase = Given("-p") && !Given("--");
  if (!Given("--"))
    Args.push_back("--");
  std::vector<std::string> Flags;
  if (std::optional<int> Status = translateFlagsAfterDashDash(Args, Flags))
    return *Status;
  if (std::optional<int> Status = rejectGroupLookalikes(Args))
    return *Status;
  int ArgCount = static_cast<int>(Args.size());
  auto Parser = clang::tooling::CommonOptionsParser::create(
      ArgCount, Args.data(), Category, cl::OneOrMore,
      "smpart-transform: rewrites CUDA kernels into a persistent-thread, "
      "preemptible, SM-restricted form\n");
  if (!Parser)
    return usageError(toString(Parser.takeError()));
  const std::vector<std::string> &Files = Parser->getSourcePathList();
  auto Fail = [](const Twine &Message) {
    errs() << "smpart-transform: error: " << Message << "\n";
    return 1;
  };
  auto BadUsage = [](const Twine &Message) {
    return usageError(("smpart-transform: error: " + Message).str());
  };
  // `-o ''` or `--manifest=` (an unset shell variable) names no file: the
  // output would silently go elsewhere or nowhere.
  // Given twice, all but the last would be silently not written.
  for (const cl::opt<std::string> *Path :
       {&Output, &OutputDir, &Manifest, &DepFile, &ExportFixes}) {
    const std::string Name =
        (Path->ArgStr.size() == 1 ? "-" : "--") + Path->ArgStr.str();
    if (Path->getNumOccurrences() && Path->empty())
      return BadUsage(Name + " needs a file name, not an empty one");
    if (Path->getNumOccurrences() > 1)
      return BadUsage(Name + " is given " + Twine(Path->getNumOccurrences()) +
                      " times; it names one output");
  }
  if (!clang::IsNVIDIAOffloadArch(clang::StringToOffloadArch(GpuArch)))
    return BadUsage("--cuda-gpu-arch='" + GpuArch +
                    "' is not an NVIDIA GPU arch (sm_70, sm_90, sm_90a, ...)");
  if (!Output.empty() && Files.size() != 1)
    return BadUsage("-o takes exactly one input file; use --output-dir");
  if (int(!Output.empty()) + int(!OutputDir.empty()) + int(InPlace) > 1)
    return BadUsage("-o, --output-dir and -i exclude each other");
  for (const cl::opt<std::string> *Re :
       {&HeaderFilter, &Kernels, &ExcludeKernels}) {
    std::string Why;
    if (!Re->empty() && !Regex(*Re).isValid(Why))
      return BadUsage("invalid regular expression for --" + Re->ArgStr + " '" +
                      *Re + "': " + Why);
  }

  // A folder given on the command line must be smpart's: a typo would
  // otherwise surface as an unknown type in every file an earlier run
  // rewrote.
  if (RuntimeInclude.getNumOccurrences() &&
      !llvm::sys::fs::exists(RuntimeInclude + "/smpart/device.cuh"))
    return BadUsage("--runtime-include='" + RuntimeInclude +
                    "' holds no smpart/device.cuh");
  smpart::TransformOptions Options;
  std::string Runtime = RuntimeInclude;
  if (!llvm::sys::fs::exists(Runtime + "/smpart/device.cuh")) {
    // An installed tool: <prefix>/bin/smpart-transform, <prefix>/include.
    SmallString<256> Installed(llvm::sys::path::parent_path(
        llvm::sys::fs::getMainExecutable(argv[0], (void *)&RuntimeInclude)));
    llvm::sys::path::append(Installed, "..", "include");
    if (llvm::sys::fs::exists(Installed + "/smpart/device.cuh"))
      Runtime = std::string(Installed);
  }
  Options.Cuda = {CudaPath,
                  GpuArch,
                  ResourceDir,
                  Runtime,
                  smpart::hostCompilerInclude(),
                  smpart::nvccCompatHeader(argv[0])};
  Options.OutputFile = Output;
  Options.OutputDir = OutputDir;
  Options.InPlace = InPlace;
  Options.HeaderFilter = HeaderFilter;
  Options.Kernels = Kernels;
  Options.ExcludeKernels = ExcludeKernels;
  Options.Keep = KeepOriginal;
  Options.ManifestFile = Manifest;
  Options.RefusalsAreErrors = RefusalsAreErrors;
  Options.ConfineRefused = ConfineRefused;
  Options.DepFile = DepFile;
  Options.ExportFixes = ExportFixes;
  Options.Diff = Diff;
  Options.Color =
      UseColor.getNumOccurrences() ? bool(UseColor) : errs().has_colors();
  if (Diff && (InPlace || !Output.empty() || !OutputDir.empty()))
    return BadUsage(
        "--diff writes nothing; it excludes -o, --output-dir and -i");
  // nvcc command lines wherever they come from: CMake's databases for nvcc
  // (Ninja: -forward-unknown-to-host-compiler; Makefiles: --options-file
  // relative to the entry's directory) and the flags after `--`.
  const clang::tooling::CompilationDatabase *Base = &Parser->getCompilations();
  std::unique_ptr<clang::tooling::ArgumentsAdjustingCompilations> Project;
  if (FromDatabase) {
    // The parser's own options (static in clang's CommonOptionsParser).
    auto &Registered = cl::getRegisteredOptions();
    const std::string BuildPath =
        static_cast<cl::opt<std::string> *>(Registered["p"])->getValue();
    std::string Error;
    std::unique_ptr<clang::tooling::CompilationDatabase> Loaded =
        smpart::loadProjectDatabase(BuildPath, Error);
    if (!Error.empty())
      return Fail(Error);
    if (!Loaded) {
      errs() << "smpart-transform: no compile_commands.json found in '"
             << BuildPath << "' or its parents; parsing with no project "
             << "flags\n";
    } else {
      using clang::tooling::ArgumentInsertPosition;
      auto ExtraArgs = [&](StringRef Name) {
        return std::vector<std::string>(
            *static_cast<cl::list<std::string> *>(Registered[Name]));
      };
      Project =
          std::make_unique<clang::tooling::ArgumentsAdjustingCompilations>(
              std::move(Loaded));
      Project->appendArgumentsAdjuster(
          clang::tooling::getInsertArgumentAdjuster(
              ExtraArgs("extra-arg-before"), ArgumentInsertPosition::BEGIN));
      Project->appendArgumentsAdjuster(
          clang::tooling::getInsertArgumentAdjuster(
              ExtraArgs("extra-arg"), ArgumentInsertPosition::END));
      Base = Project.get();
    }
  }
  smpart::NvccTranslatingDatabase Db(*Base);
  if (std::string Problem = smpart::checkSetup(Options.Cuda, Db, Files);
      !Problem.empty())
    return Fail(Problem);

  return smpart::TransformPipeline(Db, Options).run(Files);
}
