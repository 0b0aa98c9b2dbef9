#include "pipeline/TransformPipeline.h"

#include "analysis/KernelHazards.h"
#include "nvcc/DialectNotes.h"
#include "nvcc/NvccDialect.h"
#include "nvcc/NvccDialectPrinter.h"
#include "pipeline/CanonicalPath.h"
#include "pipeline/ManifestWriter.h"
#include "pipeline/OutputFile.h"
#include "pipeline/OutputSet.h"
#include "pipeline/RewriteContext.h"
#include "rewrite/BypassLoadRewrite.h"
#include "rewrite/DeviceBlockIdRewrite.h"
#include "rewrite/KernelAddressRewrite.h"
#include "rewrite/KernelQueryRewrite.h"
#include "rewrite/LaunchRewrite.h"
#include "rewrite/PersistentKernelRewrite.h"
#include "rewrite/PointerLaunchRewrite.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/Core/Replacement.h"
#include "clang/Tooling/ReplacementsYaml.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;
using namespace clang::tooling;

namespace smpart {

/// The first line of every rewritten file; finding it makes the tool a
/// no-op on its own output.
static constexpr llvm::StringLiteral Marker =
    "// smpart-transform: rewritten from ";

static std::string header(const std::string &File) {
  return (Marker + File + "; edit that file instead\n" +
          "#include \"smpart/device.cuh\"\n"
          "#include \"smpart/launch.hpp\"\n" +
          TransformPlanner::lineDirective(1, File))
      .str();
}

/// Replacements refuses two insertions at one offset (their order would be
/// ambiguous); join them here, in the edits' order.
static std::vector<Edit> coalesceInsertions(const std::set<Edit> &Edits) {
  std::vector<Edit> Out;
  for (const Edit &E : Edits) {
    if (!Out.empty() && E.Length == 0 && Out.back().Length == 0 &&
        Out.back().Offset == E.Offset && Out.back().File == E.File)
      Out.back().Text += E.Text;
    else
      Out.push_back(E);
  }
  return Out;
}

/// smpart's own diagnostics through clang's printer: `file:line:col:
/// warning: ...`, and on a terminal (or with --use-color) colours and the
/// source line with a caret, like the compiler's.
class SmpartDiagnostics {
public:
  explicit SmpartDiagnostics(bool Color)
      : Files(FileSystemOptions()), Printer(llvm::errs(), Opts),
        Diags(new DiagnosticIDs(), Opts, &Printer, /*ShouldOwnClient=*/false),
        Sources(Diags, Files) {
    Opts.ShowColors = Color;
    Opts.ShowCarets = Color;
    Diags.setSourceManager(&Sources);
    Printer.BeginSourceFile(LangOptions(), nullptr);
  }
  ~SmpartDiagnostics() { Printer.EndSourceFile(); }

  void report(const Place &P, llvm::StringRef Level, const llvm::Twine &Msg) {
    SourceLocation Loc;
    if (!P.File.empty()) {
      if (llvm::Expected<FileEntryRef> F = Files.getFileRef(P.File)) {
        FileID Id = Sources.getOrCreateFileID(*F, SrcMgr::C_User);
        Loc = Sources.translateLineCol(Id, P.Line, P.Col);
      } else {
        llvm::consumeError(F.takeError());
      }
    }
    DiagnosticsEngine::Level L = Level == "error"  ? DiagnosticsEngine::Error
                                 : Level == "note" ? DiagnosticsEngine::Note
                                                   : DiagnosticsEngine::Warning;
    unsigned Id = Diags.getCustomDiagID(L, "%0");
    if (Loc.isInvalid() && !P.File.empty()) {
      // A file that cannot be opened again: keep the position in the text.
      Diags.Report(Id) << (P.File + ":" + llvm::Twine(P.Line) + ":" +
                           llvm::Twine(P.Col) + ": " + Msg)
                              .str();
      return;
    }
    Diags.Report(Loc, Id) << Msg.str();
  }

private:
  DiagnosticOptions Opts;
  FileManager Files;
  TextDiagnosticPrinter Printer;
  DiagnosticsEngine Diags;
  SourceManager Sources;
};

/// Finds host launches, in the main file, of kernels defined in a header
/// that is not rewritten: those stay `<<<>>>` and the user should know.
class HeaderKernelLaunches : public ast_matchers::MatchFinder::MatchCallback {
public:
  HeaderKernelLaunches(const llvm::Regex *Filter,
                       std::set<std::pair<Place, std::string>> &Found)
      : Filter(Filter), Found(Found) {}
  void registerMatchers(ast_matchers::MatchFinder &Finder) {
    using namespace ast_matchers;
    Finder.addMatcher(cudaKernelCallExpr(callee(functionDecl().bind("kernel")))
                          .bind("launch"),
                      this);
  }
  void run(const ast_matchers::MatchFinder::MatchResult &R) override {
    const auto *Launch = R.Nodes.getNodeAs<CUDAKernelCallExpr>("launch");
    const auto *Kernel = R.Nodes.getNodeAs<FunctionDecl>("kernel");
    const SourceManager &SM = *R.SourceManager;
    const FunctionDecl *Def = Kernel->getDefinition();
    if (!Def) {
      if (const FunctionDecl *Pattern =
              Kernel->getTemplateInstantiationPattern())
        Def = Pattern->getDefinition();
    }
    if (!Def)
      return;
    SourceLocation DefLoc = SM.getSpellingLoc(Def->getLocation());
    SourceLocation CallLoc = SM.getExpansionLoc(Launch->getBeginLoc());
    if (!SM.isWrittenInMainFile(CallLoc) || SM.isWrittenInMainFile(DefLoc) ||
        SM.isInSystemHeader(DefLoc))
      return;
    llvm::StringRef Header = SM.getFilename(DefLoc);
    if (Header.empty() || (Filter && Filter->match(Header)))
      return;
    PresumedLoc P = SM.getPresumedLoc(CallLoc);
    Found.insert({Place{P.getFilename(), P.getLine(), P.getColumn()},
                  "smpart: kernel '" + Def->getQualifiedNameAsString() +
                      "' is defined in '" + Header.str() +
                      "', which is not rewritten: this launch stays <<<>>> "
                      "(rewrite the header with --header-filter)"});
  }

private:
  const llvm::Regex *Filter;
  std::set<std::pair<Place, std::string>> &Found;
};

/// Runs the matchers, the preprocessor callbacks of \p Callbacks, and
/// records every file the parse read (for --depfile), like the compiler's
/// -MD.
class CollectingAction : public ASTFrontendAction {
public:
  CollectingAction(ast_matchers::MatchFinder &Finder,
                   std::set<std::string> &Deps, SourceFileCallbacks &Callbacks)
      : Finder(Finder), Deps(Deps), Callbacks(Callbacks) {}
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    return Callbacks.handleBeginSource(CI);
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 llvm::StringRef) override {
    return Finder.newASTConsumer();
  }
  void EndSourceFileAction() override {
    Callbacks.handleEndSource();
    const SourceManager &SM = getCompilerInstance().getSourceManager();
    for (auto It = SM.fileinfo_begin(); It != SM.fileinfo_end(); ++It) {
      llvm::SmallString<256> Path(It->first.getName());
      if (llvm::sys::fs::make_absolute(Path) || !llvm::sys::fs::exists(Path))
        continue;
      Deps.insert(canonicalPath(Path));
    }
  }

private:
  ast_matchers::MatchFinder &Finder;
  std::set<std::string> &Deps;
  SourceFileCallbacks &Callbacks;
};

class CollectingFactory : public FrontendActionFactory {
public:
  CollectingFactory(ast_matchers::MatchFinder &Finder,
                    std::set<std::string> &Deps, SourceFileCallbacks &Callbacks)
      : Finder(Finder), Deps(Deps), Callbacks(Callbacks) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<CollectingAction>(Finder, Deps, Callbacks);
  }

private:
  ast_matchers::MatchFinder &Finder;
  std::set<std::string> &Deps;
  SourceFileCallbacks &Callbacks;
};

namespace {
/// One line of a text for the diff: its characters, and whether it is the
/// last line and lacks its newline (a line that differs only in that
/// differs: `\ No newline at end of file` says which side it is).
struct DiffLine {
  llvm::StringRef Text;
  bool NoNewline = false;
  bool operator==(const DiffLine &O) const {
    return Text == O.Text && NoNewline == O.NoNewline;
  }
};

/// \p Text's lines: no empty line after a final newline (split() would
/// give one, a line past the end that patch(1) cannot find).
std::vector<DiffLine> diffLines(llvm::StringRef Text) {
  std::vector<DiffLine> Lines;
  while (!Text.empty()) {
    const size_t Eol = Text.find('\n');
    if (Eol == llvm::StringRef::npos) {
      Lines.push_back({Text, true});
      break;
    }
    Lines.push_back({Text.take_front(Eol), false});
    Text = Text.drop_front(Eol + 1);
  }
  return Lines;
}
} // namespace

/// A unified diff (3 lines of context) of two texts, for --diff: what
/// `patch -p0` and `git apply` take.
static void unifiedDiff(llvm::raw_ostream &OS, llvm::StringRef Name,
                        llvm::StringRef Old, llvm::StringRef New) {
  const std::vector<DiffLine> A = diffLines(Old), B = diffLines(New);
  const size_t N = A.size(), M = B.size();
  // Longest common subsequence by dynamic programming (sources are small).
  std::vector<std::vector<uint32_t>> L(N + 1, std::vector<uint32_t>(M + 1));
  for (size_t I = N; I-- > 0;)
    for (size_t J = M; J-- > 0;)
      L[I][J] = A[I] == B[J] ? L[I + 1][J + 1] + 1
                             : std::max(L[I + 1][J], L[I][J + 1]);
  struct Line {
    char Kind;
    DiffLine Text;
    size_t OldNo, NewNo;
  };
  std::vector<Line> Script;
  size_t I = 0, J = 0;
  while (I < N || J < M) {
    if (I < N && J < M && A[I] == B[J])
      Script.push_back({' ', A[I], I++, J++});
    else if (J < M && (I == N || L[I][J + 1] >= L[I + 1][J]))
      Script.push_back({'+', B[J], I, J++});
    else
      Script.push_back({'-', A[I], I++, J});
  }
  OS << "--- " << Name << "\n+++ " << Name << " (smpart)\n";
  const size_t Context = 3;
  for (size_t K = 0; K < Script.size();) {
    if (Script[K].Kind == ' ') {
      ++K;
      continue;
    }
    size_t Begin = K >= Context ? K - Context : 0;
    // One hunk while the changes are at most 2*Context lines apart.
    size_t Last = K;
    for (size_t X = K; X < Script.size() && X - Last <= 2 * Context; ++X)
      if (Script[X].Kind != ' ')
        Last = X;
    size_t End = std::min(Script.size(), Last + Context + 1);
    size_t OldCount = 0, NewCount = 0;
    for (size_t X = Begin; X < End; ++X) {
      OldCount += Script[X].Kind != '+';
      NewCount += Script[X].Kind != '-';
    }
    // An empty side starts at the line before it (0 for an empty file).
    const size_t OldStart = Script[Begin].OldNo + (OldCount ? 1 : 0);
    const size_t NewStart = Script[Begin].NewNo + (NewCount ? 1 : 0);
    OS << "@@ -" << OldStart << "," << OldCount << " +" << NewStart << ","
       << NewCount << " @@\n";
    for (size_t X = Begin; X < End; ++X) {
      OS << Script[X].Kind << Script[X].Text.Text << "\n";
      if (Script[X].Text.NoNewline)
        OS << "\\ No newline at end of file\n";
    }
    K = End;
  }
}

namespace {
/// Records, for one parse, launches in code the preprocessor skipped.
class RecordSkippedLaunches : public SourceFileCallbacks {
public:
  RecordSkippedLaunches(const RewriteContext &Ctx, std::set<SkippedLaunch> &Out,
                        std::string CudaPath, std::set<std::string> &Notes)
      : Ctx(Ctx), Out(Out), CudaPath(std::move(CudaPath)), Notes(Notes) {}
  bool handleBeginSource(CompilerInstance &CI) override {
    const SourceManager &SM = CI.getSourceManager();
    auto Rewritable = [this, &SM](SourceLocation L) {
      return Ctx.isRewritable(SM, L);
    };
    CI.getPreprocessor().addPPCallbacks(
        std::make_unique<InactiveLaunches>(SM, Rewritable, Out));
    CI.getPreprocessor().addPPCallbacks(
        std::make_unique<DialectNotes>(SM, Rewritable, CudaPath, Notes));
    return true;
  }

private:
  const RewriteContext &Ctx;
  std::set<SkippedLaunch> &Out;
  std::string CudaPath;
  std::set<std::string> &Notes;
};
} // namespace

bool TransformPipeline::parse(const std::string &File, bool DeviceSide,
                              FileOutcome &Outcome,
                              std::set<SkippedLaunch> &Skipped) {
  FileFacts &Facts = Outcome.Facts;
  std::optional<llvm::Regex> Filter;
  if (!Options.HeaderFilter.empty())
    Filter.emplace(Options.HeaderFilter);
  RewriteContext Ctx(Facts, Filter ? &*Filter : nullptr, Options.Keep);
  PersistentKernelRewrite Kernels(Ctx);
  KernelQueryRewrite Queries(Ctx);
  KernelAddressRewrite Addresses(Ctx);
  BypassLoadRewrite Loads(Ctx);
  DeviceBlockIdRewrite DeviceFunctions(Ctx);
  LaunchRewrite Launches(Ctx);
  PointerLaunchRewrite PointerLaunches(Ctx);
  KernelHazards Hazards(Ctx);
  HeaderKernelLaunches HeaderLaunches(Filter ? &*Filter : nullptr,
                                      Outcome.UnrewrittenHeaderKernels);
  ast_matchers::MatchFinder Finder;
  if (!DeviceSide)
    HeaderLaunches.registerMatchers(Finder);
  Kernels.registerMatchers(Finder);
  Loads.registerMatchers(Finder);
  DeviceFunctions.registerMatchers(Finder);
  Launches.registerMatchers(Finder);
  PointerLaunches.registerMatchers(Finder);
  Queries.registerMatchers(Finder);
  Addresses.registerMatchers(Finder);
  Hazards.registerMatchers(Finder);

  ClangTool Tool(Db, {File});
  // Spellings nvcc accepts and clang does not, replaced line-length-neutrally
  // in a copy the parse reads instead of the file (nvcc/NvccDialect.h).
  llvm::SmallString<128> Copy;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Text =
          llvm::MemoryBuffer::getFile(File)) {
    const std::string ForClang = NvccDialect::forClang((*Text)->getBuffer());
    int FD = -1;
    if (ForClang != (*Text)->getBuffer() &&
        !llvm::sys::fs::createTemporaryFile("smpart-nvcc", "cu", FD, Copy)) {
      llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
      OS << ForClang;
      OS.close();
      Tool.appendArgumentsAdjuster(getInsertArgumentAdjuster(
          {"-Xclang", "-remap-file", "-Xclang",
           getAbsolutePath(File) + ";" + std::string(Copy)},
          ArgumentInsertPosition::END));
    }
  }
  llvm::scope_exit RemoveCopy([&] {
    if (!Copy.empty())
      llvm::sys::fs::remove(Copy);
  });
  Tool.appendArgumentsAdjuster(cudaAdjuster(Options.Cuda, DeviceSide));
  // The tool rewrites, it does not compile: the user's compiler warns.
  Tool.appendArgumentsAdjuster(
      getInsertArgumentAdjuster("-w", ArgumentInsertPosition::END));
  RecordSkippedLaunches Callbacks(Ctx, Skipped, Options.Cuda.CudaPath,
                                  DialectWarnings);
  // Driver and compiler diagnostics both go through this printer; any error
  // among them (an unknown argument included) fails the file, whatever the
  // tool's own return value says.
  DiagnosticOptions DiagOpts;
  DiagOpts.ShowColors = Options.Color;
  NvccDialectPrinter Printer(llvm::errs(), DiagOpts);
  Tool.setDiagnosticConsumer(&Printer);
  // clang's CUDA wrapper includes the toolkit's cuda.h, never a project's
  // own (mapVirtualFile keeps a reference: CudaShim lives until the run).
  const std::string ShimPath = Options.Cuda.ResourceDir + "/include/cuda.h";
  if (!CudaShim.empty())
    Tool.mapVirtualFile(ShimPath, CudaShim);
  CollectingFactory Factory(Finder, Outcome.Dependencies, Callbacks);
  int Status = Tool.run(&Factory);
  // The tool's status is non-zero after a tolerated error too; the count
  // of the errors that were printed as errors decides.
  return Printer.getNumErrors() == 0 && (Status == 0 || Printer.Tolerated > 0);
}

std::optional<std::string>
TransformPipeline::transformFile(const std::string &File, FileOutcome &Outcome,
                                 std::map<std::string, std::string> &Others) {
  Outcome.File = File;
  // The file is read here and again by the parse: a pipe or a device gives
  // its text only once (the parse would see none, and rewrite nothing).
  namespace fs = llvm::sys::fs;
  if (fs::file_status Status; !fs::status(File, Status) &&
                              Status.type() != fs::file_type::regular_file &&
                              Status.type() != fs::file_type::directory_file) {
    llvm::errs() << "smpart-transform: error: cannot read '" << File
                 << "': not a regular file (a pipe or a device can be read "
                    "only once; save it to a file first)\n";
    return std::nullopt;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buffer =
      llvm::MemoryBuffer::getFile(File);
  if (!Buffer) {
    llvm::errs() << "smpart-transform: error: cannot read '" << File
                 << "': " << Buffer.getError().message() << "\n";
    return std::nullopt;
  }
  // A database that neither lists the file nor has an entry to infer its
  // command from (an empty one): clang would say only "Skipping".
  if (Db.getCompileCommands(File).empty()) {
    llvm::errs() << "smpart-transform: error: no compile command for '" << File
                 << "': the compilation database neither lists it nor has "
                    "an entry to infer one from; nothing was written\n";
    return std::nullopt;
  }
  std::string Code = (*Buffer)->getBuffer().str();
  llvm::StringRef First(Code);
  First.consume_front("\xEF\xBB\xBF"); // a byte order mark stays first
  if (First.starts_with(Marker)) {
    Outcome.AlreadyTransformed = true;
    return Code;
  }
  // Code under `#ifdef __CUDA_ARCH__` is only seen by the device side, host
  // launches mostly by the host side: the facts of both are merged.
  std::set<SkippedLaunch> HostSkipped, DeviceSkipped;
  DialectWarnings.clear();
  const bool Parsed = parse(File, /*DeviceSide=*/false, Outcome, HostSkipped) &&
                      parse(File, /*DeviceSide=*/true, Outcome, DeviceSkipped);
  for (const std::string &W : DialectWarnings)
    llvm::errs() << W << "\n";
  if (!Parsed) {
    llvm::errs() << "smpart-transform: error: '" << File
                 << "' does not compile; nothing was written\n";
    return std::nullopt;
  }

  InactiveLaunches::refuse(HostSkipped, DeviceSkipped, Outcome.Facts);

  std::optional<llvm::Regex> Only, Exclude;
  if (!Options.Kernels.empty())
    Only.emplace(Options.Kernels);
  if (!Options.ExcludeKernels.empty())
    Exclude.emplace(Options.ExcludeKernels);
  Outcome.Plan =
      TransformPlanner(Outcome.Facts, Only ? &*Only : nullptr,
                       Exclude ? &*Exclude : nullptr, Options.ConfineRefused)
          .plan();

  // Edits (and #line directives) name files canonically, whatever the
  // spelling of the command line: `../src/k.cu` is the main file, not a
  // header of it.
  const std::string Main = canonicalPath(File);
  std::optional<std::string> Result = Code;
  for (const auto &[Path, Edits] : Outcome.Plan.EditsByFile) {
    if (Edits.empty())
      continue;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Text =
        Path == Main ? llvm::MemoryBuffer::getMemBuffer(Code)
                     : llvm::MemoryBuffer::getFile(Path);
    if (!Text) {
      llvm::errs() << "smpart-transform: error: cannot read '" << Path << "'\n";
      return std::nullopt;
    }
    std::set<Edit> Final = Edits;
    if (auto Twice = Outcome.Plan.TagSwitchedByFile.find(Path);
        Twice != Outcome.Plan.TagSwitchedByFile.end())
      for (const TagSwitchedText &T : Twice->second)
        TransformPlanner::unswitch(T, (*Text)->getBuffer(), Final);
    Replacements Reps;
    for (const Edit &E : coalesceInsertions(Final))
      if (llvm::Error Err =
              Reps.add(Replacement(E.File, E.Offset, E.Length, E.Text))) {
        llvm::errs() << "smpart-transform: error: conflicting rewrites in '"
                     << Path << "': " << llvm::toString(std::move(Err)) << "\n";
        return std::nullopt;
      }
    llvm::Expected<std::string> New =
        applyAllReplacements((*Text)->getBuffer(), Reps);
    if (!New) {
      llvm::errs() << "smpart-transform: error: "
                   << llvm::toString(New.takeError()) << "\n";
      return std::nullopt;
    }
    // A UTF-8 byte order mark stays first, where nvcc accepts it.
    const std::size_t At =
        (*Text)->getBuffer().starts_with("\xEF\xBB\xBF") ? 3 : 0;
    std::string Rewritten = New->substr(0, At) + header(Path) + New->substr(At);
    // The same rewrite as replacements, for --export-fixes.
    Replacements &Fix = Outcome.Fixes[Path];
    llvm::consumeError(Fix.add(Replacement(Path, At, 0, header(Path))));
    for (const Replacement &R : Reps)
      llvm::consumeError(Fix.add(Replacement(Path, R.getOffset(), R.getLength(),
                                             R.getReplacementText())));
    if (Path == Main)
      Result = std::move(Rewritten);
    else
      Others[Path] = std::move(Rewritten);
  }
  return Result;
}

void TransformPipeline::report(const FileOutcome &Outcome, bool &Failed) const {
  llvm::StringRef Level = Options.RefusalsAreErrors ? "error" : "warning";
  SmpartDiagnostics Diags(Options.Color);
  auto printDiag = [&](llvm::raw_ostream &, const Place &P, llvm::StringRef L,
                       const llvm::Twine &Message) {
    Diags.report(P, L, Message);
  };
  for (const auto &[Where, Message] : Outcome.UnrewrittenHeaderKernels)
    Diags.report(Where, "warning", Message);
  for (const KernelDecision &D : Outcome.Plan.Kernels) {
    for (const Hazard &W : D.Warnings)
      printDiag(llvm::errs(), W.Where, "warning",
                "smpart: kernel '" + D.Kernel->Name + "' " + W.Reason);
    if (D.Status != KernelStatus::Refused)
      continue;
    Failed |= Options.RefusalsAreErrors;
    for (const Hazard &H : D.Reasons) {
      printDiag(llvm::errs(), H.Where.File.empty() ? D.Kernel->Where : H.Where,
                Level,
                "smpart: kernel '" + D.Kernel->Name +
                    "' not transformed: " + H.Reason);
      for (const auto &[Where, Note] : H.Notes)
        printDiag(llvm::errs(), Where, "note", Note);
    }
  }
  if (Options.ConfineRefused)
    for (const PointerLaunchDecision &D : Outcome.Plan.PointerLaunches)
      if (!D.Confined)
        printDiag(
            llvm::errs(), D.Launch->Where, "warning",
            "smpart: the launch through " +
                (D.Launch->Callee.empty()
                     ? std::string("a kernel pointer")
                     : "the kernel pointer '" + D.Launch->Callee + "'") +
                " runs on every SM, outside smpart's plan: " + D.FreeBecause);
  // A --kernels pattern that names nothing is most likely a typo.
  const auto &Kernels = Outcome.Plan.Kernels;
  if (!Options.Kernels.empty() && !Kernels.empty() &&
      llvm::all_of(Kernels, [](const KernelDecision &D) {
        return D.Status == KernelStatus::Excluded && !D.Reasons.empty() &&
               D.Reasons.front().Reason == "not matched by --kernels";
      }))
    llvm::errs() << "smpart-transform: note: --kernels='" << Options.Kernels
                 << "' matches none of the " << Kernels.size()
                 << " kernel(s) of '" << Outcome.File
                 << "' (qualified names, e.g. 'ns::k')\n";
}

/// The cuda.h of the wrapper's own folder, which its `#include "cuda.h"`
/// finds first: the toolkit's, by absolute path, so that a project's own
/// cuda.h on the include path cannot stand in for it (nvcc never includes
/// cuda.h behind the program's back). The program's own `#include
/// "cuda.h"` still finds the project's file first, as with nvcc.
static std::string cudaShim(const CudaSetup &Cuda) {
  std::string Real = Cuda.CudaPath + "/include/cuda.h";
  if (!llvm::sys::fs::exists(Real))
    return {};
  return "// smpart-transform: the cuda.h clang's CUDA wrapper includes\n"
         "#include \"" +
         Real + "\"\n";
}

bool TransformPipeline::outputsWritable() const {
  // An output that cannot be written fails the run before any parse, as a
  // compiler's -o into a missing folder does. A report inside --output-dir
  // is made with it (OutputSet::write).
  for (const std::string *Out : {&Options.OutputFile, &Options.ManifestFile,
                                 &Options.ExportFixes, &Options.DepFile})
    if (!Out->empty() &&
        !(!Options.OutputDir.empty() && isInFolder(*Out, Options.OutputDir)))
      if (std::string Why = OutputFile::problem(*Out); !Why.empty()) {
        llvm::errs() << "smpart-transform: error: cannot write '" << *Out
                     << "': " << Why << "\n";
        return false;
      }
  return true;
}

std::string TransformPipeline::destination(const std::string &Path,
                                           const std::string &MainFile) const {
  if (Options.InPlace)
    return Path;
  if (!Options.OutputDir.empty()) {
    // A header below the folder of the main file that includes it keeps its
    // path from there (out/inc/k.cuh), so that the rewritten main file's
    // `#include "inc/k.cuh"` finds the rewrite, beside it, before the
    // original that -I still reaches. Any other file goes beside the main
    // file, where a quoted include of its bare name looks first.
    std::string Relative(llvm::sys::path::filename(Path));
    if (!MainFile.empty()) {
      llvm::SmallString<256> Dir(
          llvm::sys::path::parent_path(canonicalPath(MainFile)));
      llvm::sys::path::append(Dir, "");
      std::string Header = canonicalPath(Path);
      if (llvm::StringRef(Header).starts_with(Dir))
        Relative = Header.substr(Dir.size());
    }
    llvm::SmallString<256> Out(Options.OutputDir);
    llvm::sys::path::append(Out, Relative);
    return std::string(Out);
  }
  return Options.OutputFile.empty() ? "-" : Options.OutputFile;
}

bool TransformPipeline::planOutputs(
    const std::string &File, const std::string &Text,
    const FileOutcome &Outcome,
    const std::map<std::string, std::string> &Others, OutputSet &Outputs) {
  if (Options.Diff) {
    // Dry run: what would change, as a patch against the originals.
    for (const auto &[Path, Rewritten] : Others)
      if (auto Old = llvm::MemoryBuffer::getFile(Path))
        unifiedDiff(llvm::outs(), Path, (*Old)->getBuffer(), Rewritten);
    if (auto Old = llvm::MemoryBuffer::getFile(File);
        Old && (*Old)->getBuffer() != Text)
      unifiedDiff(llvm::outs(), File, (*Old)->getBuffer(), Text);
    // The depfile's rule names the input, as for the standard output.
    Outputs.addTarget(File);
    return true;
  }
  if (!Others.empty() && !Options.InPlace && Options.OutputDir.empty()) {
    llvm::errs() << "smpart-transform: error: headers of '" << File
                 << "' need rewriting too; use -i or --output-dir\n";
    return false;
  }
  for (const auto &[Path, Rewritten] : Others) {
    Outputs.add(destination(Path, File), Rewritten, Path, File);
    Outputs.addTarget(destination(Path, File));
  }
  // In place, an unchanged file is not touched at all.
  if (!(Options.InPlace && Outcome.Plan.EditsByFile.empty()))
    Outputs.add(destination(File), Text, canonicalPath(File), File);
  Outputs.addTarget(destination(File) == "-" ? File : destination(File));
  return true;
}

void TransformPipeline::addReports(const std::vector<std::string> &Files,
                                   const std::vector<FileOutcome> &Outcomes,
                                   OutputSet &Outputs) const {
  if (!Options.ManifestFile.empty()) {
    std::string Json;
    llvm::raw_string_ostream OS(Json);
    writeManifest(OS, Outcomes);
    Outputs.addReport(Options.ManifestFile, OS.str(), "the manifest");
  }
  if (!Options.ExportFixes.empty()) {
    // clang-apply-replacements' format, as clang-tidy --export-fixes.
    TranslationUnitReplacements TU;
    TU.MainSourceFile = Files.empty() ? "" : canonicalPath(Files.front());
    for (const FileOutcome &O : Outcomes)
      for (const auto &[Path, Reps] : O.Fixes)
        TU.Replacements.insert(TU.Replacements.end(), Reps.begin(), Reps.end());
    std::string Yaml;
    llvm::raw_string_ostream OS(Yaml);
    llvm::yaml::Output Out(OS);
    Out << TU;
    Outputs.addReport(Options.ExportFixes, OS.str(),
                      "the replacements (--export-fixes)");
  }
  if (!Options.DepFile.empty())
    if (std::string Rule = Outputs.depFile(); !Rule.empty())
      Outputs.addReport(Options.DepFile, Rule, "the depfile");
}

int TransformPipeline::run(const std::vector<std::string> &Files) {
  CudaShim = cudaShim(Options.Cuda);
  if (!outputsWritable())
    return 1;
  std::vector<FileOutcome> Outcomes;
  OutputSet Outputs;
  bool Failed = false;
  for (const std::string &File : Files) {
    FileOutcome Outcome;
    std::map<std::string, std::string> Others;
    std::optional<std::string> Text = transformFile(File, Outcome, Others);
    Outputs.addDependency(canonicalPath(File));
    Outputs.addDependencies(Outcome.Dependencies);
    if (!Text) {
      Failed = true;
      continue;
    }
    bool FileFailed = false;
    report(Outcome, FileFailed);
    if (Outcome.AlreadyTransformed)
      llvm::errs() << "smpart-transform: note: '" << File
                   << "' is already transformed; left unchanged\n";
    Outcomes.push_back(std::move(Outcome));
    Failed |= FileFailed ||
              !planOutputs(File, *Text, Outcomes.back(), Others, Outputs);
  }
  addReports(Files, Outcomes, Outputs);
  // A clash writes nothing at all, not even the manifest: it may be the
  // clash.
  if (!Outputs.checkCollisions(Options.InPlace))
    return 1;
  if (Failed && Files.size() > 1 && !Outputs.empty()) {
    llvm::errs() << "smpart-transform: error: not every file could be "
                    "rewritten; nothing was written\n";
    return 1;
  }
  // A file that failed still gets its reports: the manifest says why.
  Failed |= !Outputs.write(Options.OutputDir, /*ReportsOnly=*/Failed);
  return Failed ? 1 : 0;
}

} // namespace smpart
