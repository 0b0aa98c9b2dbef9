// Uses of a kernel's address that launch it with its original argument
// list: a CUDA graph kernel node (`cudaKernelNodeParams::func`), a launch
// API (`cudaLaunchKernel`, `cuLaunchKernel` through cudaGetFuncBySymbol), a
// function pointer or a table. Such a use names the original overload,
// which the planner then keeps beside the rewritten kernel:
//   node.func = (void *)k;
//   -> node.func = (void *)smpart::original(k, k);
// so the kernel's <<<>>> launches are still rewritten, and what the use
// launches runs unchanged (with a warning: outside smpart's plan). The
// first argument picks the rewritten overload by deduction, which fixes
// the original's parameter types for the second (control.hpp): no types
// are spelled, so every instantiation of a template edits its text alike.
// A use that cannot name the original refuses the kernel, as before: in
// device code (dynamic parallelism), an extern "C" kernel or one whose
// parameter list starts with a pack (no overload beside it), a template
// named without its arguments (deduced from the target type), or a text
// that cannot be edited.
#pragma once

#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class KernelAddressRewrite
    : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit KernelAddressRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  RewriteContext &Ctx;
};

} // namespace smpart
