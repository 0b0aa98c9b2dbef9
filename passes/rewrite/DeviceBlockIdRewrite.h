// Device functions reached from a transformed kernel must see the logical
// block too: their reads of blockIdx/gridDim become smpart::blockIdx() /
// smpart::gridDim(), which read the CTA's current decision from shared
// memory. Also records the call graph among functions of the rewritten
// files, which decides where these edits apply (see TransformPlanner).
#pragma once

#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class DeviceBlockIdRewrite
    : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit DeviceBlockIdRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  RewriteContext &Ctx;
};

} // namespace smpart
