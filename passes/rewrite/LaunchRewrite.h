// Rewrites host launches of kernels defined in the rewritten files,
//   k<<<g, b, s, st>>>(a, b)
// into a call of the runtime that keeps a closure able to relaunch the same
// kernel with the same (once-evaluated) arguments:
//   smpart::launchRewritten({"k", &k}, g, b, s, st,
//       [smpart_args = std::make_tuple(a, b)](const smpart::LaunchParams &p) {
//         std::apply(... k<<<p.grid, p.block, p.smem, p.stream>>>(p.ctl,
//                                                                a...));
//       })
// The original callee text is kept inside the closure, so overloads,
// template arguments and default arguments resolve exactly as before.
// When the kernel's original definition is kept beside the rewritten one,
// the closure can launch either (LaunchParams::original): the runtime runs
// the original with the original configuration under SMPART_DISABLE=1.
#pragma once

#include <functional>

#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class LaunchRewrite : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit LaunchRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

  /// The expression that names the kernel's address for occupancy queries,
  /// or "nullptr" when it cannot be spelled without changing overload
  /// resolution (deduced template arguments in dependent code). Spelled
  /// with the rewritten signature \p BesideOriginal (the planner keeps
  /// the original overload) or where the call chose among overloads.
  static std::string kernelAddress(const clang::CUDAKernelCallExpr &Call,
                                   llvm::StringRef CalleeText,
                                   const clang::ASTContext &AST,
                                   bool BesideOriginal);

private:
  RewriteContext &Ctx;
};

} // namespace smpart
