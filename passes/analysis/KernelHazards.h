// Constructs that depend on the physical grid and so cannot survive the
// persistent-thread transformation: grid-wide synchronisation, grid_group
// ranks, thread_block::group_index(), device-side launches and inline asm
// that reads %ctaid/%nctaid, cluster attributes. Found per function; a kernel
// is refused when it or a device function it reaches contains one. Uses of a
// kernel's address that launch it with its original arguments are
// KernelAddressRewrite's.
#pragma once

#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class KernelHazards : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit KernelHazards(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

  /// Why a call depends on the physical grid, or empty if it does not.
  static std::string gridDependentCall(const clang::CallExpr &Call);
  /// True for the runtime API calls that take a kernel to query or
  /// configure it without launching it (cudaOccupancy*, cudaFuncGet*,
  /// cudaFuncSet*): such a use of a kernel's name is no hazard, and
  /// KernelQueryRewrite names the rewritten kernel there.
  static bool isKernelQuery(llvm::StringRef CalleeName);
  /// True if an inline asm string reads the physical block or grid index.
  static bool readsPhysicalBlockId(llvm::StringRef AsmString);
  /// Hazard::RunsFree: why a refused kernel stays on every SM.
  static constexpr const char *WholeGrid =
      "it synchronises its whole grid, whose CTAs must all be resident at "
      "once: a partition smaller than the GPU may not hold them";
  static constexpr const char *Clusters =
      "its thread-block clusters need co-scheduled SMs that a partition may "
      "not offer";
  static constexpr const char *DeviceLaunches =
      "it launches or is launched from device code, where a partition's "
      "stream does not reach";
  static constexpr const char *ApiLaunches =
      "it is launched through a launch API, which smpart does not rewrite";
  /// True if the asm runs PTX `exit` (the thread ends for good).
  static bool exitsThread(llvm::StringRef AsmString);

  /// How a use of a kernel's name is consumed: launched with <<<>>>, passed
  /// to a query that does not launch, passed to a launch API (\p Api is
  /// then the call), given a cluster attribute, or anything else (the
  /// address escapes: a graph node, a function pointer or a table).
  enum class NameUse { Launch, Query, LaunchApi, ClusterAttribute, Escape };
  static NameUse classifyNameUse(const clang::DeclRefExpr &Use,
                                 clang::ASTContext &AST,
                                 const clang::CallExpr *&Api);

private:
  RewriteContext &Ctx;
};

} // namespace smpart
