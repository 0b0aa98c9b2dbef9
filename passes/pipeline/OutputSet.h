// Every file one run of the tool would write, gathered before any is
// written: a run is all or nothing, like a build step (every file is staged
// beside its target before the first is renamed onto it), two writes that
// would land on one file differently are an error that names both, and no
// write may replace a file the run reads, except a rewrite in place (-i).
#pragma once

#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>
#include <vector>

namespace smpart {

/// \p Path lies in \p Dir or below it, spelled either way (neither needs
/// to exist: --output-dir is made by the run).
bool isInFolder(llvm::StringRef Path, llvm::StringRef Dir);

class OutputSet {
public:
  /// \p Text is the rewrite of \p Source (canonical name) made by the parse
  /// of \p Input, to be written to \p Destination ("-": standard output).
  void add(std::string Destination, std::string Text, std::string Source,
           std::string Input);
  /// A report of the run (--manifest, --export-fixes, --depfile), which
  /// \p What names in errors ("the manifest").
  void addReport(std::string Destination, std::string Text, std::string What);
  /// What the depfile's rule makes, and what it depends on.
  void addTarget(std::string Target) { Targets.push_back(std::move(Target)); }
  void addDependency(std::string Path) { Dependencies.insert(std::move(Path)); }
  template <typename Range> void addDependencies(const Range &Paths) {
    Dependencies.insert(Paths.begin(), Paths.end());
  }

  /// Whether a rewritten file is to be written (reports aside).
  bool empty() const;

  /// Prints an error for every destination two writes disagree on (a
  /// header shared by several files is rewritten the same way each time;
  /// under --output-dir two sources of one name meet at one file; -o and
  /// --manifest may name one file) and for every write that would replace
  /// a file the run read, unless it is that file's rewrite and \p InPlace.
  /// Returns false if there was one.
  bool checkCollisions(bool InPlace) const;

  /// Writes every destination once, all or none: each regular file is
  /// staged first (under \p OutputDir, if given, its folder made first),
  /// then the special files (a device, a FIFO, standard output) are
  /// written, then each staged file is renamed onto its target. A failed
  /// stage or special write removes every staged file and every folder it
  /// made. \p ReportsOnly writes the reports alone (a run that failed still
  /// says why in its manifest).
  bool write(llvm::StringRef OutputDir, bool ReportsOnly = false) const;

  /// `out.cu: in.cu header.cuh ...`, as the compiler's -MD writes it, so a
  /// build system re-runs the rewrite when any of them changes; empty when
  /// no target was added.
  std::string depFile() const;

private:
  struct PendingWrite {
    std::string Destination, Text;
    std::string Source; ///< the file rewritten (canonical name)
    std::string Input;  ///< the input whose parse rewrote it
    std::string Report; ///< for a report: what it is; empty for a rewrite
  };
  /// "the rewrite of 'a.cu'" or the report's name.
  static std::string describe(const PendingWrite &W);
  std::vector<PendingWrite> Writes;
  std::vector<std::string> Targets;
  std::set<std::string> Dependencies;
};

} // namespace smpart
