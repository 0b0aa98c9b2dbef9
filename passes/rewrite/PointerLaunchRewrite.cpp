#include "rewrite/PointerLaunchRewrite.h"

#include "analysis/DeviceCode.h"
#include "rewrite/ConfinedStreamEdit.h"
#include "rewrite/LaunchSyntax.h"

#include "clang/AST/ExprCXX.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void PointerLaunchRewrite::registerMatchers(MatchFinder &Finder) {
  Finder.addMatcher(hostLaunch(), this);
}

static bool isVolatile(const Expr *E) {
  return !E->getType().isNull() && E->getType().isVolatileQualified();
}

/// `E` without parentheses, implicit casts, `*` and `&`; null if a level
/// on the way is volatile (`*pp` of a `kfn volatile *pp`).
static const Expr *stripped(const Expr *E) {
  for (;;) {
    E = E->IgnoreParenImpCasts();
    if (isVolatile(E))
      return nullptr;
    const auto *U = dyn_cast<UnaryOperator>(E);
    if (!U || (U->getOpcode() != UO_Deref && U->getOpcode() != UO_AddrOf))
      return E;
    E = U->getSubExpr();
  }
}

/// A subscript of a standard container whose operator[] only reads (a
/// map's inserts, and a user-defined one may do anything).
static bool readingSubscript(const CXXOperatorCallExpr &Op) {
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(Op.getCalleeDecl());
  if (!Method)
    return false;
  if (Method->isConst())
    return true;
  const CXXRecordDecl *Class = Method->getParent();
  return Class->isInStdNamespace() &&
         llvm::is_contained({"vector", "array", "span", "deque"},
                            Class->getName());
}

/// Evaluating `E` once more changes nothing: it only reads variables,
/// members and elements (also in a template, where clang cannot tell),
/// none of them volatile.
static bool readsOnly(const Expr *E) {
  E = stripped(E);
  if (!E)
    return false;
  if (isa<DeclRefExpr, DependentScopeDeclRefExpr, IntegerLiteral, CXXThisExpr>(
          E))
    return true;
  if (const auto *M = dyn_cast<MemberExpr>(E))
    return readsOnly(M->getBase());
  if (const auto *M = dyn_cast<CXXDependentScopeMemberExpr>(E))
    return M->isImplicitAccess() || readsOnly(M->getBase());
  if (const auto *A = dyn_cast<ArraySubscriptExpr>(E)) {
    // In a template, `m[i]` of a dependent type may become any class's
    // operator[] (a map's inserts): only a pointer or an array is known
    // to be read.
    const Expr *Base = A->getBase()->IgnoreParenImpCasts();
    if (Base->isTypeDependent() && !Base->getType()->isPointerType() &&
        !Base->getType()->isArrayType())
      return false;
    return readsOnly(A->getBase()) && readsOnly(A->getIdx());
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E))
    return Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2 &&
           readingSubscript(*Op) && readsOnly(Op->getArg(0)) &&
           readsOnly(Op->getArg(1));
  return false;
}

void PointerLaunchRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CUDAKernelCallExpr>("launch");
  // A launch that names its kernel is LaunchRewrite's.
  if (!Call || launchedKernel(*Call))
    return;
  // A host lambda's launch, typed device-side by the device parse
  // (LaunchRewrite): the host parse sees it.
  const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("fn");
  if (Result.Context->getLangOpts().CUDAIsDevice && Fn &&
      Fn->hasAttr<CUDADeviceAttr>())
    return;
  const SourceManager &SM = *Result.SourceManager;
  if (!Ctx.isRewritable(SM, Call->getBeginLoc()))
    return;
  const Place Where = RewriteContext::placeOf(SM, Call->getBeginLoc());
  PointerLaunchFacts L;
  L.Where = Where;
  std::optional<LaunchSyntax> S =
      parseLaunch(*Call, SM, Result.Context->getLangOpts());
  if (S)
    L.Callee = S->CalleeText;
  if (!S || !S->MacroName.empty())
    L.FreeBecause = "it is spelled in a macro or across files";
  else if (!readsOnly(Call->getCallee()))
    L.FreeBecause = "its callee is more than a read of a variable, member "
                    "or element, and would be evaluated twice";
  else if (!(L.Confined = confinedStreamEdits(*Call, *S, L.Callee, SM,
                                              Result.Context->getLangOpts())))
    L.FreeBecause = "its stream argument is not spelled in the file";
  Ctx.facts().PointerLaunches[Where] = std::move(L);
}

} // namespace smpart
