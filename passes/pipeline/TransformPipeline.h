// Runs the whole transformation of a set of files: for each main file, a
// host-side and a device-side parse with every rewrite class registered,
// the merge of their facts, the plan, the diagnostics, and the atomic
// writing of outputs and the manifest.
#pragma once

#include "analysis/InactiveLaunches.h"

#include "nvcc/CompilerFlags.h"
#include "pipeline/TransformPlanner.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Core/Replacement.h"

#include <map>
#include <set>

#include <optional>
#include <string>
#include <vector>

namespace smpart {

class OutputSet;

struct TransformOptions {
  CudaSetup Cuda;
  std::string OutputFile;     ///< -o (one input only)
  std::string OutputDir;      ///< --output-dir
  bool InPlace = false;       ///< -i
  std::string HeaderFilter;   ///< regex; empty: main files only
  std::string Kernels;        ///< regex of kernels to transform
  std::string ExcludeKernels; ///< regex of kernels to leave alone
  std::string ManifestFile;   ///< --manifest
  bool RefusalsAreErrors = false;
  std::string DepFile;     ///< --depfile: Makefile rule of every input read
  std::string ExportFixes; ///< --export-fixes: clang-apply-replacements YAML
  bool Diff = false;       ///< --diff: print a unified diff, write nothing
  bool Color = false;      ///< colours and source snippets in diagnostics
  /// --keep-original: kernels that keep their original definition
  KeepOriginal Keep = KeepOriginal::All;
  /// --confine-refused: launches of refused kernels run on their partition
  bool ConfineRefused = true;
};

/// The outcome for one input file, as the manifest reports it.
struct FileOutcome {
  std::string File;
  bool AlreadyTransformed = false;
  TransformPlan Plan;
  FileFacts Facts;
  /// Every file the two parses read (main file, headers, toolkit headers).
  std::set<std::string> Dependencies;
  /// Launches of kernels defined in headers that are not rewritten (no
  /// --header-filter match): left as `<<<>>>`, with a warning.
  std::set<std::pair<Place, std::string>> UnrewrittenHeaderKernels;
  /// The whole rewrite as replacements per file (for --export-fixes).
  std::map<std::string, clang::tooling::Replacements> Fixes;
};

class TransformPipeline {
public:
  TransformPipeline(const clang::tooling::CompilationDatabase &Db,
                    TransformOptions Options)
      : Db(Db), Options(std::move(Options)) {}

  /// Transforms every file; returns the process exit code (0 ok, 1 error).
  int run(const std::vector<std::string> &Files);

private:
  /// The rewritten text of one file, or nullopt with diagnostics printed.
  std::optional<std::string>
  transformFile(const std::string &File, FileOutcome &Outcome,
                std::map<std::string, std::string> &OtherFiles);

  bool parse(const std::string &File, bool DeviceSide, FileOutcome &Outcome,
             std::set<SkippedLaunch> &Skipped);
  void report(const FileOutcome &Outcome, bool &Failed) const;

  /// Whether every named output can be written at all (checked first).
  bool outputsWritable() const;
  /// Where the rewrite of \p Path goes ("-": standard output); a header
  /// is placed relative to \p MainFile, the input that includes it.
  std::string destination(const std::string &Path,
                          const std::string &MainFile = "") const;
  /// Adds one input's rewritten files to \p Outputs (or prints them as a
  /// diff under --diff); false if they have nowhere to go.
  bool planOutputs(const std::string &File, const std::string &Text,
                   const FileOutcome &Outcome,
                   const std::map<std::string, std::string> &Others,
                   OutputSet &Outputs);
  /// --manifest, --export-fixes and --depfile, written with the rewrites.
  void addReports(const std::vector<std::string> &Files,
                  const std::vector<FileOutcome> &Outcomes,
                  OutputSet &Outputs) const;

  const clang::tooling::CompilationDatabase &Db;
  TransformOptions Options;
  /// nvcc-dialect warnings of the file being parsed (both sides).
  std::set<std::string> DialectWarnings;
  /// With the compatibility header: the cuda.h clang's CUDA wrapper sees
  /// (the toolkit's, never a project's own cuda.h).
  std::string CudaShim;
};

} // namespace smpart
