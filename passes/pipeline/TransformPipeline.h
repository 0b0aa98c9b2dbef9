// Runs the whole transformation of a set of files: for each main file, a
// host-side and a device-side parse with every rewrite class registered,
// the merge of their facts, the plan, the diagnostics, and the atomic
// writing of outputs and the manifest.
#pragma once

#include "analysis/InactiveLaunches.h"

#include "pipeline/CompilerFlags.h"
#include "pipeline/TransformPlanner.h"

#include "clang/Tooling/CompilationDatabase.h"

#include <optional>
#include <string>
#include <vector>

namespace smpart {

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
};

/// The outcome for one input file, as the manifest reports it.
struct FileOutcome {
  std::string File;
  bool AlreadyTransformed = false;
  TransformPlan Plan;
  FileFacts Facts;
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
  std::optional<std::string> transformFile(const std::string &File,
                                           FileOutcome &Outcome,
                                           std::map<std::string, std::string>
                                               &OtherFiles);

  bool parse(const std::string &File, bool DeviceSide, FileFacts &Facts,
             std::set<SkippedLaunch> &Skipped);
  void report(const FileOutcome &Outcome, bool &Failed) const;

  const clang::tooling::CompilationDatabase &Db;
  TransformOptions Options;
  /// nvcc-dialect warnings of the file being parsed (both sides).
  std::set<std::string> DialectWarnings;
};

} // namespace smpart
