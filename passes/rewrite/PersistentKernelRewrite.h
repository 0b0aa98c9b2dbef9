// Turns each __global__ definition into the persistent form: adds the
// `smpart::LaunchControl smpart_ctl` parameter to every declaration, wraps
// the body in the loop over logical blocks (the prologue itself is generated
// after both parses, see TransformPlanner), turns `return` into a jump to
// the end of the current logical block, and records the kernel's facts
// (name, parameters, resource hints), its refusals, and the copy of its
// original definition (rewrite/OriginalKernel.h) the planner may keep.
#pragma once

#include "analysis/DispatchTargets.h"
#include "pipeline/RewriteContext.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace smpart {

class PersistentKernelRewrite
    : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit PersistentKernelRewrite(RewriteContext &Ctx) : Ctx(Ctx) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &Finder);
  void
  run(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void onStartOfTranslationUnit() override { Dispatched.reset(); }

private:
  void recordKernel(const clang::FunctionDecl &Kernel,
                    const clang::ast_matchers::MatchFinder::MatchResult &R);
  void rewriteDeclarations(const clang::FunctionDecl &Kernel,
                           clang::ASTContext &AST, FunctionFacts &F);
  void keepForeignDeclaration(const clang::FunctionDecl &Kernel,
                              const clang::FunctionDecl &D,
                              const clang::SourceManager &SM, FunctionFacts &F);
  void rewriteExplicitInstantiations(const clang::FunctionDecl &Kernel,
                                     const clang::SourceManager &SM,
                                     const clang::LangOptions &LO,
                                     FunctionFacts &F);
  void keepOriginal(const clang::FunctionDecl &Kernel,
                    const clang::CompoundStmt &Body,
                    const clang::SourceManager &SM, FunctionFacts &F);
  void recordReturn(const clang::ReturnStmt &Return,
                    const clang::FunctionDecl &Kernel,
                    const clang::SourceManager &SM);
  void recordBlockIdUse(const clang::DeclRefExpr &Ref,
                        const clang::FunctionDecl &Kernel,
                        const clang::SourceManager &SM);
  RewriteContext &Ctx;
  DispatchTargets Dispatched;
};

} // namespace smpart
