#include "rewrite/KernelQueryRewrite.h"

#include "analysis/AgreedParents.h"
#include "analysis/KernelHazards.h"
#include "rewrite/KernelNameEdit.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void KernelQueryRewrite::registerMatchers(MatchFinder &Finder) {
  // Instantiations too: a query in a template names the kernel only there
  // when the name or the call depends on a template parameter. Every
  // instantiation edits the pattern's text identically (the edit needs no
  // types), so the edits merge.
  Finder.addMatcher(
      declRefExpr(to(functionDecl(hasAttr(attr::CUDAGlobal)))).bind("ref"),
      this);
}

/// The expression to replace when \p Child (the name, or a cast or `&`
/// around it) is an argument of a kernel query, through parentheses and
/// casts: \p Operand, or `&name` for the address; else null. \p Query:
/// the query's name.
static const Expr *queriedKernelExpr(const Stmt &Child, const Expr &Operand,
                                     ASTContext &AST, StringRef &Query) {
  return agreedOverParents(
      Child, AST, static_cast<const Expr *>(nullptr),
      [&](const Stmt *P) -> const Expr * {
        if (const auto *Call = dyn_cast_or_null<CallExpr>(P)) {
          const FunctionDecl *Callee = Call->getDirectCallee();
          if (!Callee || !Callee->getIdentifier() ||
              Call->getCallee() == &Child ||
              !KernelHazards::isKernelQuery(Callee->getName()))
            return nullptr;
          Query = Callee->getName();
          return &Operand;
        }
        if (const auto *Unary = dyn_cast_or_null<UnaryOperator>(P))
          return Unary->getOpcode() == UO_AddrOf && &Child == &Operand
                     ? queriedKernelExpr(*P, *Unary, AST, Query)
                     : nullptr;
        if (isa_and_nonnull<ImplicitCastExpr, ParenExpr, CStyleCastExpr,
                            CXXNamedCastExpr, CXXFunctionalCastExpr>(P))
          return queriedKernelExpr(*P, Operand, AST, Query);
        return nullptr;
      });
}

void KernelQueryRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Ref = Result.Nodes.getNodeAs<DeclRefExpr>("ref");
  const SourceManager &SM = *Result.SourceManager;
  const auto *Kernel = dyn_cast<FunctionDecl>(Ref->getDecl());
  const FunctionDecl *Pattern = RewriteContext::patternOf(Kernel);
  if (!Pattern->hasBody() || !Ctx.isRewritable(SM, Pattern->getLocation()) ||
      RewriteContext::isGeneratedKernel(*Pattern))
    return;
  StringRef Query;
  const Expr *Operand = queriedKernelExpr(*Ref, *Ref, *Result.Context, Query);
  if (!Operand)
    return;
  // The answers that hold the largest block the kernel takes, which a
  // program may choose its blocks by.
  if (Query.starts_with("cudaFuncGetAttributes") ||
      Query.starts_with("cudaOccupancyMaxPotentialBlockSize"))
    Ctx.functionFacts(SM, Pattern).MaxBlockSizeRead = true;
  // checkCudaErrors(cudaFuncSetAttribute(k, ...)): edited in the macro
  // argument, where it is written.
  if (std::optional<Edit> E =
          wrapKernelName(*Operand, SM, Result.Context->getLangOpts(), Ctx,
                         [](llvm::StringRef Text) {
                           return "smpart::rewritten(" + Text.str() + ")";
                         }))
    Ctx.functionFacts(SM, Pattern).Edits.insert(*E);
}

} // namespace smpart
