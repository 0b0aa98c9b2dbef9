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

/// A `name<<<`, or any other use of an identifier, spelled in skipped code
/// of a rewritable file (comments and literals excluded).
struct SkippedLaunch {
  std::string Kernel; ///< the name as written (unqualified)
  Place Where;
  /// `name<<<`; otherwise the name is only mentioned: a graph node, a
  /// launch API, a pointer or another definition of the kernel, which that
  /// configuration would use with the original signature.
  bool Launch = true;
  bool operator<(const SkippedLaunch &O) const {
    return std::tie(Kernel, Where, Launch) <
           std::tie(O.Kernel, O.Where, O.Launch);
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

  /// Launches `name<<<` (also spelled `<< <`) and the other identifiers in
  /// `Text`, which starts at line `Line`, column `Col` of `File`. Comments,
  /// string and character literals, and members after `.`/`->` are skipped.
  static std::set<SkippedLaunch> scan(llvm::StringRef Text,
                                      const std::string &File, unsigned Line,
                                      unsigned Col);

  /// Adds a refusal to every kernel launched or named in code both parses
  /// skipped.
  static void refuse(const std::set<SkippedLaunch> &Host,
                     const std::set<SkippedLaunch> &Device, FileFacts &Facts);

private:
  const clang::SourceManager &SM;
  std::function<bool(clang::SourceLocation)> Rewritable;
  std::set<SkippedLaunch> &Out;
};

} // namespace smpart
