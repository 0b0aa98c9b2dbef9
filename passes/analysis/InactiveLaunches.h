// Launches in code the preprocessor skipped. A kernel launched only under
// an `#if` branch that this configuration leaves out keeps its `<<<>>>`
// there while its definition gains the control parameter: the other
// configuration of the same file would no longer compile. The skipped
// ranges of one parse are recorded (PPCallbacks::SourceRangeSkipped), the
// launches in them found by lexing the skipped text, and a launch counts
// only if both parses (host and device side) skipped it.
#pragma once

#include "pipeline/Facts.h"

#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"

#include <set>
#include <string>
#include <utility>

namespace smpart {

/// A `name<<<` spelled in skipped code of a rewritable file.
struct SkippedLaunch {
  std::string Kernel; ///< the name as written before `<<<` (unqualified)
  Place Where;
  bool operator<(const SkippedLaunch &O) const {
    return std::tie(Kernel, Where) < std::tie(O.Kernel, O.Where);
  }
};

class InactiveLaunches : public clang::PPCallbacks {
public:
  /// `Rewritable` says which files' skipped code matters.
  InactiveLaunches(const clang::SourceManager &SM,
                   std::function<bool(clang::SourceLocation)> Rewritable,
                   std::set<SkippedLaunch> &Out)
      : SM(SM), Rewritable(std::move(Rewritable)), Out(Out) {}

  void SourceRangeSkipped(clang::SourceRange Range,
                          clang::SourceLocation EndifLoc) override;

  /// Launches `name<<<` (also spelled `<< <`) in `Text`, which starts at
  /// line `Line`, column `Col` of `File`.
  static std::set<SkippedLaunch> scan(llvm::StringRef Text,
                                      const std::string &File, unsigned Line,
                                      unsigned Col);

  /// Adds a refusal to every kernel named in a launch both parses skipped.
  static void refuse(const std::set<SkippedLaunch> &Host,
                     const std::set<SkippedLaunch> &Device, FileFacts &Facts);

private:
  const clang::SourceManager &SM;
  std::function<bool(clang::SourceLocation)> Rewritable;
  std::set<SkippedLaunch> &Out;
};

} // namespace smpart
