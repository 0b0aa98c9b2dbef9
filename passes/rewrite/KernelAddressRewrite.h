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
// A kernel nothing in its file launches with <<<>>> (and no other file
// needs) is refused instead, as before: its rewrite would run nowhere. A
// use that cannot name the original refuses the kernel too: in device code
// (dynamic parallelism), an extern "C" kernel or one whose parameter list
// starts with a pack (no overload beside it), kernels overloaded in the
// source, a template named without its arguments (deduced from the target
// type), an unevaluated operand (decltype), a use before any declaration
// of the rewritten overload (a header's), or a text that cannot be edited.
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
