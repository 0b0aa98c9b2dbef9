#include "pipeline/TransformPipeline.h"

#include "analysis/DialectNotes.h"
#include "analysis/KernelHazards.h"
#include "pipeline/ManifestWriter.h"
#include "pipeline/NvccDialect.h"
#include "pipeline/RewriteContext.h"
#include "rewrite/BypassLoadRewrite.h"
#include "rewrite/DeviceBlockIdRewrite.h"
#include "rewrite/LaunchRewrite.h"
#include "rewrite/PersistentKernelRewrite.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Tooling/Core/Replacement.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
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
          "#include \"smpart/runtime.hpp\"\n"
          "#line 1 \"" + File + "\"\n")
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

static void printDiag(llvm::raw_ostream &OS, const Place &P,
                      llvm::StringRef Level, const llvm::Twine &Message) {
  if (!P.File.empty())
    OS << P.File << ":" << P.Line << ":" << P.Col << ": ";
  OS << Level << ": " << Message << "\n";
}

static bool writeAtomically(const std::string &Path, llvm::StringRef Text) {
  llvm::Error E = llvm::writeToOutput(Path, [&](llvm::raw_ostream &OS) {
    OS << Text;
    return llvm::Error::success();
  });
  if (E) {
    llvm::errs() << "smpart-transform: error: cannot write '" << Path
                 << "': " << llvm::toString(std::move(E)) << "\n";
    return false;
  }
  return true;
}

namespace {
/// Records, for one parse, launches in code the preprocessor skipped.
class RecordSkippedLaunches : public SourceFileCallbacks {
public:
  RecordSkippedLaunches(const RewriteContext &Ctx,
                        std::set<SkippedLaunch> &Out, std::string CudaPath,
                        std::set<std::string> &Notes)
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
                              FileFacts &Facts,
                              std::set<SkippedLaunch> &Skipped) {
  std::optional<llvm::Regex> Filter;
  if (!Options.HeaderFilter.empty())
    Filter.emplace(Options.HeaderFilter);
  RewriteContext Ctx(Facts, Filter ? &*Filter : nullptr);
  PersistentKernelRewrite Kernels(Ctx);
  BypassLoadRewrite Loads(Ctx);
  DeviceBlockIdRewrite DeviceFunctions(Ctx);
  LaunchRewrite Launches(Ctx);
  KernelHazards Hazards(Ctx);
  ast_matchers::MatchFinder Finder;
  Kernels.registerMatchers(Finder);
  Loads.registerMatchers(Finder);
  DeviceFunctions.registerMatchers(Finder);
  Launches.registerMatchers(Finder);
  Hazards.registerMatchers(Finder);

  ClangTool Tool(Db, {File});
  // Spellings nvcc accepts and clang does not, replaced line-length-neutrally
  // in a copy the parse reads instead of the file (pipeline/NvccDialect.h).
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
  auto RemoveCopy = llvm::make_scope_exit([&] {
    if (!Copy.empty())
      llvm::sys::fs::remove(Copy);
  });
  Tool.appendArgumentsAdjuster(cudaAdjuster(Options.Cuda, DeviceSide));
  // The tool rewrites, it does not compile: the user's compiler warns.
  Tool.appendArgumentsAdjuster(
      getInsertArgumentAdjuster("-w", ArgumentInsertPosition::END));
  RecordSkippedLaunches Callbacks(Ctx, Skipped, Options.Cuda.CudaPath,
                                  DialectWarnings);
  return Tool.run(newFrontendActionFactory(&Finder, &Callbacks).get()) == 0;
}

std::optional<std::string>
TransformPipeline::transformFile(const std::string &File, FileOutcome &Outcome,
                                 std::map<std::string, std::string> &Others) {
  Outcome.File = File;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buffer =
      llvm::MemoryBuffer::getFile(File);
  if (!Buffer) {
    llvm::errs() << "smpart-transform: error: cannot read '" << File
                 << "': " << Buffer.getError().message() << "\n";
    return std::nullopt;
  }
  std::string Code = (*Buffer)->getBuffer().str();
  if (llvm::StringRef(Code).starts_with(Marker)) {
    Outcome.AlreadyTransformed = true;
    return Code;
  }
  // Code under `#ifdef __CUDA_ARCH__` is only seen by the device side, host
  // launches mostly by the host side: the facts of both are merged.
  std::set<SkippedLaunch> HostSkipped, DeviceSkipped;
  DialectWarnings.clear();
  const bool Parsed =
      parse(File, /*DeviceSide=*/false, Outcome.Facts, HostSkipped) &&
      parse(File, /*DeviceSide=*/true, Outcome.Facts, DeviceSkipped);
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
  Outcome.Plan = TransformPlanner(Outcome.Facts, Only ? &*Only : nullptr,
                                  Exclude ? &*Exclude : nullptr)
                     .plan();

  // ClangTool parses the main file under its absolute path, so that is the
  // name the edits (and #line directives) carry.
  const std::string Main = getAbsolutePath(File);
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
    Replacements Reps;
    for (const Edit &E : coalesceInsertions(Edits))
      if (llvm::Error Err =
              Reps.add(Replacement(E.File, E.Offset, E.Length, E.Text))) {
        llvm::errs() << "smpart-transform: error: conflicting rewrites in '"
                     << Path << "': " << llvm::toString(std::move(Err))
                     << "\n";
        return std::nullopt;
      }
    llvm::Expected<std::string> New =
        applyAllReplacements((*Text)->getBuffer(), Reps);
    if (!New) {
      llvm::errs() << "smpart-transform: error: " << llvm::toString(New.takeError())
                   << "\n";
      return std::nullopt;
    }
    std::string Rewritten = header(Path) + *New;
    if (Path == Main)
      Result = std::move(Rewritten);
    else
      Others[Path] = std::move(Rewritten);
  }
  return Result;
}

void TransformPipeline::report(const FileOutcome &Outcome, bool &Failed) const {
  llvm::StringRef Level = Options.RefusalsAreErrors ? "error" : "warning";
  for (const KernelDecision &D : Outcome.Plan.Kernels) {
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
}

int TransformPipeline::run(const std::vector<std::string> &Files) {
  std::vector<FileOutcome> Outcomes;
  bool Failed = false;
  // `--output-dir build/smpart` on a fresh build tree: make it, as the
  // help's example expects.
  if (!Options.OutputDir.empty())
    if (std::error_code EC =
            llvm::sys::fs::create_directories(Options.OutputDir)) {
      llvm::errs() << "smpart-transform: error: cannot create '"
                   << Options.OutputDir << "': " << EC.message() << "\n";
      return 1;
    }
  // Every output is computed first and written only if every file
  // succeeded: a multi-file run is all or nothing, like a build step.
  std::vector<std::pair<std::string, std::string>> Writes;
  for (const std::string &File : Files) {
    FileOutcome Outcome;
    std::map<std::string, std::string> Others;
    std::optional<std::string> Text = transformFile(File, Outcome, Others);
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
    if (FileFailed) {
      Failed = true;
      continue;
    }

    if (!Others.empty() && !Options.InPlace && Options.OutputDir.empty()) {
      llvm::errs() << "smpart-transform: error: headers of '" << File
                   << "' need rewriting too; use -i or --output-dir\n";
      Failed = true;
      continue;
    }
    auto Destination = [&](const std::string &Path) -> std::string {
      if (Options.InPlace)
        return Path;
      if (!Options.OutputDir.empty()) {
        llvm::SmallString<256> Out(Options.OutputDir);
        llvm::sys::path::append(Out, llvm::sys::path::filename(Path));
        return std::string(Out);
      }
      return Options.OutputFile.empty() ? "-" : Options.OutputFile;
    };
    for (const auto &[Path, Rewritten] : Others)
      Writes.emplace_back(Destination(Path), Rewritten);
    // In place, an unchanged file is not touched at all.
    if (!(Options.InPlace && Outcomes.back().Plan.EditsByFile.empty()))
      Writes.emplace_back(Destination(File), *Text);
  }
  // A header shared by several files is rewritten the same way each time.
  std::map<std::string, std::string> ByPath;
  for (const auto &[Path, Text] : Writes)
    if (Path != "-" && !ByPath.emplace(Path, Text).second &&
        ByPath[Path] != Text) {
      llvm::errs() << "smpart-transform: error: '" << Path
                   << "' would be rewritten differently for different "
                      "files\n";
      Failed = true;
    }
  if (Failed && Files.size() > 1 && !Writes.empty()) {
    llvm::errs() << "smpart-transform: error: not every file could be "
                    "rewritten; nothing was written\n";
    return 1;
  }
  if (!Failed) {
    std::set<std::string> Done;
    for (const auto &[Path, Text] : Writes)
      if (Path == "-" || Done.insert(Path).second)
        Failed |= !writeAtomically(Path, Text);
  }
  if (!Options.ManifestFile.empty()) {
    std::string Json;
    llvm::raw_string_ostream OS(Json);
    writeManifest(OS, Outcomes);
    Failed |= !writeAtomically(Options.ManifestFile, OS.str());
  }
  return Failed ? 1 : 0;
}

} // namespace smpart
