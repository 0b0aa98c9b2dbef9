#include "rewrite/BypassLoadRewrite.h"

#include "analysis/GlobalPointerProvenance.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/Regex.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

bool BypassLoadRewrite::isLoadableType(QualType T) {
  if (T.isVolatileQualified())
    return false;
  if (T->isArithmeticType() && !T->isBooleanType())
    return true;
  const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
  static const llvm::Regex Vector(
      "^(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$");
  return RD && RD->getIdentifier() && Vector.match(RD->getName());
}

void BypassLoadRewrite::registerMatchers(MatchFinder &Finder) {
  auto Kernel = functionDecl(hasAttr(attr::CUDAGlobal), isDefinition());
  auto Access =
      expr(ignoringParens(expr(anyOf(arraySubscriptExpr(),
                                     unaryOperator(hasOperatorName("*"))))))
          .bind("access");
  // Scalars: an lvalue-to-rvalue conversion of p[i] or *p.
  Finder.addMatcher(implicitCastExpr(hasCastKind(CK_LValueToRValue),
                                     has(Access),
                                     forFunction(Kernel.bind("kernel"))),
                    this);
  // Vector types (float4, ...): a copy construction from p[i] or *p.
  Finder.addMatcher(cxxConstructExpr(argumentCountIs(1), hasArgument(0, Access),
                                     forFunction(Kernel.bind("kernel"))),
                    this);
}

bool BypassLoadRewrite::isReadOnlyParam(const Expr *Pointer,
                                        const FunctionDecl &Kernel) {
  for (;;) {
    Pointer = Pointer->IgnoreParenImpCasts();
    const auto *BO = dyn_cast<BinaryOperator>(Pointer);
    if (!BO || (BO->getOpcode() != BO_Add && BO->getOpcode() != BO_Sub))
      break;
    Pointer =
        BO->getLHS()->getType()->isPointerType() ? BO->getLHS() : BO->getRHS();
  }
  const auto *Ref = dyn_cast<DeclRefExpr>(Pointer);
  const auto *Param = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
  if (!Param || Param->getDeclContext() != &Kernel)
    return false;
  const QualType T = Param->getType();
  return T.isRestrictQualified() && T->isPointerType() &&
         T->getPointeeType().isConstQualified();
}

/// The pointer a subscript or dereference reads through.
static const Expr *pointerOf(const Expr *Access) {
  Access = Access->IgnoreParens();
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(Access))
    return AS->getBase()->getType()->isPointerType() ? AS->getBase() : nullptr;
  if (const auto *UO = dyn_cast<UnaryOperator>(Access))
    return UO->getSubExpr();
  return nullptr;
}

void BypassLoadRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Kernel = Result.Nodes.getNodeAs<FunctionDecl>("kernel");
  if (Kernel && RewriteContext::isGeneratedKernel(*Kernel))
    return;
  const auto *Access = Result.Nodes.getNodeAs<Expr>("access");
  const SourceManager &SM = *Result.SourceManager;
  if (!Kernel || !Access || !Ctx.isRewritable(SM, Kernel->getLocation()) ||
      Access->getBeginLoc().isMacroID() || Access->getEndLoc().isMacroID() ||
      !isLoadableType(Access->getType()))
    return;
  const Expr *Pointer = pointerOf(Access);
  if (!Pointer)
    return;
  auto &Analysis = Provenance[Kernel];
  if (!Analysis)
    Analysis = std::make_unique<GlobalPointerProvenance>(*Kernel);
  if (!Analysis->isGlobal(Pointer))
    return;

  SourceLocation End = Lexer::getLocForEndOfToken(
      Access->getEndLoc(), 0, SM, Result.Context->getLangOpts());
  std::optional<Edit> Open = RewriteContext::insert(
      SM, Access->getBeginLoc(),
      isReadOnlyParam(Pointer, *Kernel) ? "smpart::load_ro(&"
                                        : "smpart::load(&");
  std::optional<Edit> Close =
      RewriteContext::insert(SM, End, std::string(", ") + BypassTagExpr + ")");
  if (!Open || !Close)
    return;
  FunctionFacts &F = Ctx.functionFacts(SM, Kernel);
  F.Edits.insert(*Open);
  F.Edits.insert(*Close);
  Unswitch.noteLoad(*Access, *Kernel, *Result.Context, F);
}

} // namespace smpart
