// Device functions reached from a transformed kernel must see the logical
// block too: their reads of blockIdx/gridDim become smpart::blockIdx() /
// smpart::gridDim(), which read the CTA's current decision from shared
// memory. Also records the call graph among functions of the rewritten
// files, which decides where these edits apply (see TransformPlanner), and
// what the device functions they call that this run does not rewrite do
// with the block index (OpaqueBlockIdReads): a read of the physical one
// refuses the caller, a call into another translation unit makes the
// kernel publish its logical block.
#pragma once

#include "analysis/DispatchTargets.h"
#include "analysis/OpaqueBlockIdReads.h"
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
  void onStartOfTranslationUnit() override { Dispatched.reset(); }

private:
  /// A call at \p At from \p Caller (rewritten) to \p Callee: an edge of
  /// the call graph where the callee is rewritten too, else what the callee
  /// reads (callsUnrewritten).
  void follow(const clang::SourceManager &SM, const clang::FunctionDecl &Caller,
              const clang::FunctionDecl &Callee, clang::SourceLocation At,
              const clang::Expr *Call, bool DeviceSide);
  /// The destruction of an object whose static type is \p Static through
  /// its virtual destructor: follows the destructor of every class it may
  /// be (DispatchTargets::destroyedAs), or where they cannot be listed
  /// refuses \p Caller, which \p Verb ("deletes") the object.
  void followDestruction(const clang::SourceManager &SM,
                         const clang::FunctionDecl &Caller,
                         const clang::CXXRecordDecl &Static,
                         clang::SourceLocation At, const clang::ASTContext &AST,
                         llvm::StringRef Verb);
  /// What a refusal of a call chosen at run time adds under separate
  /// compilation, where DispatchTargets cannot list the targets.
  static std::string separateCompilation(const clang::ASTContext &AST);
  /// A call at \p At from \p Caller (rewritten) to \p Callee, which is
  /// not: \p Call (its default arguments), or none (a destructor), seen by
  /// the device-side parse or not.
  void callsUnrewritten(const clang::SourceManager &SM,
                        const clang::FunctionDecl &Caller,
                        const clang::FunctionDecl &Callee,
                        clang::SourceLocation At, const clang::Expr *Call,
                        bool DeviceSide);

  RewriteContext &Ctx;
  OpaqueBlockIdReads Reads;
  DispatchTargets Dispatched;
};

} // namespace smpart
