// Host launches through a kernel pointer (a variable, a table, a member),
// whose kernel is known only when the launch runs:
//   fp<<<g, b, s, st>>>(a)
//   -> fp<<<g, b, s, smpart::confined(fp, st)>>>(a)
// The launch stays as written and runs on the SMs of the partition of the
// kernel the pointer holds (named as a direct launch of that kernel names
// it, smpart/confined.hpp), so that a plan holds it like a refused
// kernel's launch; applied with --confine-refused. The callee is written
// twice, so only one that reads variables, members and elements can be
// (`fp`, `kernels[i]`, `ops.step`, `(*fp)`); a callee that calls or
// assigns, or a launch spelled in a macro, runs free, with a warning.
#pragma once

#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class PointerLaunchRewrite
    : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit PointerLaunchRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  RewriteContext &Ctx;
};

} // namespace smpart
