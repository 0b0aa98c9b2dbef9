// Names the rewritten kernel in the CUDA calls that query or configure a
// kernel without launching it (cudaFuncSetAttribute, cudaFuncGetAttributes,
// cudaFuncSetCacheConfig, the cudaOccupancy* queries, ...):
//   cudaFuncSetAttribute(k, ...)
//   -> cudaFuncSetAttribute(smpart::rewritten(k), ...)
// Where the original is kept beside the rewritten overload, the bare name
// is ambiguous ("more than one instance of overloaded function"); and the
// kernel that runs is the rewritten one, whose attributes occupancy needs.
// smpart::rewritten (control.hpp) picks the overload by deduction, so the
// edit needs no parameter types and is the same in every instantiation of
// a template; a name spelled in a macro argument is edited where it is
// written. The edits belong to the kernel and apply only if it is
// transformed.
#pragma once

#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class KernelQueryRewrite
    : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit KernelQueryRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  RewriteContext &Ctx;
};

} // namespace smpart
