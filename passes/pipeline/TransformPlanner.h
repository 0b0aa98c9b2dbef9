// Decides, from the merged facts of both parses, which kernels are
// transformed and which refused, and turns that into the edits of each file.
//
// A kernel is transformed unless it is excluded by the user, not fully
// rewritable, or it (or a device function it reaches) has a hazard. Two
// rules couple kernels, applied until nothing changes: a device function
// that reads blockIdx/gridDim is rewritten for all its callers or none, and a
// launch spelled in a macro body is rewritten for all its expansions or none.
// A transformed kernel keeps its original definition where other files need
// it, and where --keep-original asks for it unless the device functions it
// calls read blockIdx/gridDim; its launches can then run the original too.
// With --confine-refused, the `<<<>>>` launches of a refused kernel stay
// as written but run on its partition's SMs (smpart/confined.hpp,
// smpart::confined), unless it needs the whole GPU; so do launches through
// a kernel pointer, which may launch any kernel.
#pragma once

#include "pipeline/Facts.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace smpart {

enum class KernelStatus { Transformed, Refused, Excluded };

struct KernelDecision {
  const FunctionFacts *Kernel = nullptr;
  KernelStatus Status = KernelStatus::Transformed;
  std::vector<Hazard> Reasons; ///< why refused
  /// Transformed, on an assumption the user must check (device functions
  /// of another translation unit).
  std::vector<Hazard> Warnings;
  /// Transformed, with its original definition kept beside the rewritten
  /// overload (FunctionFacts::NeedsOriginal, --keep-original).
  bool KeepsOriginal = false;
  /// Refused: every launch of it in the rewritten files runs on the SMs of
  /// its partition (--confine-refused); otherwise why it runs free.
  bool Confined = false;
  std::string FreeBecause;
};

/// A launch through a kernel pointer: on its kernel's partition, or free
/// on every SM (and why).
struct PointerLaunchDecision {
  const PointerLaunchFacts *Launch = nullptr;
  bool Confined = false;
  std::string FreeBecause;
};

struct TransformPlan {
  std::vector<KernelDecision> Kernels;                ///< in source order
  std::vector<PointerLaunchDecision> PointerLaunches; ///< in source order
  std::map<std::string, std::set<Edit>> EditsByFile;
  /// Code of transformed kernels written once per bypass tag, by file.
  std::map<std::string, std::set<TagSwitchedText>> TagSwitchedByFile;
};

class TransformPlanner {
public:
  TransformPlanner(const FileFacts &Facts, const llvm::Regex *Only,
                   const llvm::Regex *Exclude, bool ConfineRefused = false)
      : Facts(Facts), Only(Only), Exclude(Exclude),
        ConfineRefused(ConfineRefused) {}

  TransformPlan plan() const;

  /// Why a refused kernel must run on every SM (the first of its hazards
  /// that says so, Hazard::RunsFree), or empty if it may be held to a
  /// partition.
  static std::string confinementObstacle(const KernelDecision &D);
  /// `#line N "file"`, the name escaped as a string literal (a `"` or a
  /// backslash in a file name).
  static std::string lineDirective(unsigned Line, const std::string &File);

  /// The text inserted after a kernel body's `{` and before its `}`.
  static std::string prologue(const KernelBody &Body, bool PublishBlockIdx);
  static std::string epilogue(const KernelBody &Body);

  /// Replaces the edits inside \p Text with one edit that writes it twice
  /// from \p FileText, behind a test of the bypass tag, each copy with
  /// those edits and the tag a constant (BypassLoopUnswitch). Leaves
  /// \p Edits as they were if one crosses its bounds.
  static void unswitch(const TagSwitchedText &Text, llvm::StringRef FileText,
                       std::set<Edit> &Edits);

private:
  std::set<std::string> reachable(const std::string &Key) const;
  /// Why kernel \p K, whose original must be kept, cannot be transformed
  /// given the functions it reaches, if it cannot.
  std::optional<Hazard>
  keptOriginalHazard(const FunctionFacts &K,
                     const std::set<std::string> &Reached) const;

  const FileFacts &Facts;
  const llvm::Regex *Only;
  const llvm::Regex *Exclude;
  bool ConfineRefused;
};

} // namespace smpart
