#include "rewrite/KernelAddressRewrite.h"

#include "analysis/DeviceCode.h"
#include "analysis/KernelHazards.h"
#include "rewrite/KernelNameEdit.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void KernelAddressRewrite::registerMatchers(MatchFinder &Finder) {
  auto DeviceVariable =
      varDecl(anyOf(hasAttr(attr::CUDADevice), hasAttr(attr::CUDAConstant),
                    hasAttr(attr::CUDAShared)));
  Finder.addMatcher(
      declRefExpr(to(functionDecl(hasAttr(attr::CUDAGlobal)).bind("kernel")),
                  optionally(forFunction(functionDecl().bind("in"))),
                  optionally(hasAncestor(DeviceVariable.bind("devvar"))))
          .bind("use"),
      this);
}

/// A use the rewrite need not see: the argument of smpart::original (a
/// file rewritten before), or the kernel substituted for a non-type
/// template parameter inside the template (its argument is the use).
static bool seenAlready(const DeclRefExpr &Use, ASTContext &AST) {
  const Stmt *E = &Use;
  for (;;) {
    const DynTypedNodeList Parents = AST.getParents(*E);
    if (Parents.size() != 1)
      return false;
    if (Parents[0].get<SubstNonTypeTemplateParmExpr>())
      return true;
    if (const auto *Call = Parents[0].get<CallExpr>()) {
      const FunctionDecl *Callee = Call->getDirectCallee();
      return Callee && Callee->getQualifiedNameAsString() == "smpart::original";
    }
    const auto *Next = Parents[0].get<Expr>();
    if (!Next || !isa<ImplicitCastExpr, ParenExpr, UnaryOperator>(Next))
      return false;
    E = Next;
  }
}

/// Another kernel of the same name in the same scope (user overloads):
/// smpart::original(k, k) could not pick among them.
static bool overloadedInSource(const FunctionDecl &Pattern) {
  const Decl *Self = Pattern.getCanonicalDecl();
  if (const FunctionTemplateDecl *T = Pattern.getDescribedFunctionTemplate())
    Self = T->getCanonicalDecl();
  for (const NamedDecl *D :
       Pattern.getDeclContext()->getRedeclContext()->lookup(
           Pattern.getDeclName())) {
    const FunctionDecl *FD = D->getAsFunction();
    if (FD && D->getCanonicalDecl() != Self &&
        !RewriteContext::isGeneratedKernel(*FD))
      return true;
  }
  return false;
}

/// A declaration that gets the control parameter (the kernel's own file)
/// comes before \p At: smpart::original needs the rewritten overload in
/// scope there.
static bool rewrittenDeclaredBefore(const FunctionDecl &Pattern,
                                    SourceLocation At, const SourceManager &SM,
                                    const RewriteContext &Ctx) {
  const FileID Home = SM.getFileID(SM.getExpansionLoc(Pattern.getLocation()));
  return llvm::any_of(Pattern.redecls(), [&](const FunctionDecl *D) {
    const SourceLocation L = SM.getExpansionLoc(D->getLocation());
    return SM.getFileID(L) == Home && Ctx.isRewritable(SM, L) &&
           SM.isBeforeInTranslationUnit(L, SM.getExpansionLoc(At));
  });
}

/// `&k` when \p Use is the operand of `&` (through parentheses), else the
/// name itself.
static const Expr &operandOf(const DeclRefExpr &Use, ASTContext &AST) {
  const Expr *E = &Use;
  for (;;) {
    const DynTypedNodeList Parents = AST.getParents(*E);
    if (Parents.size() != 1)
      return *E;
    if (const auto *Paren = Parents[0].get<ParenExpr>()) {
      E = Paren;
      continue;
    }
    const auto *Unary = Parents[0].get<UnaryOperator>();
    return Unary && Unary->getOpcode() == UO_AddrOf ? *Unary : *E;
  }
}

void KernelAddressRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Use = Result.Nodes.getNodeAs<DeclRefExpr>("use");
  const auto *Named = Result.Nodes.getNodeAs<FunctionDecl>("kernel");
  const SourceManager &SM = *Result.SourceManager;
  ASTContext &AST = *Result.Context;
  const FunctionDecl *Pattern = RewriteContext::patternOf(Named);
  if (!Ctx.isRewritable(SM, Pattern->getLocation()) ||
      RewriteContext::isGeneratedKernel(*Pattern))
    return;
  const CallExpr *Api = nullptr;
  const KernelHazards::NameUse Kind =
      KernelHazards::classifyNameUse(*Use, AST, Api);
  if ((Kind != KernelHazards::NameUse::LaunchApi &&
       Kind != KernelHazards::NameUse::Escape) ||
      seenAlready(*Use, AST))
    return;
  const Place At = RewriteContext::placeOf(SM, Use->getBeginLoc());
  const std::string How =
      Kind == KernelHazards::NameUse::LaunchApi
          ? "given to " + Api->getDirectCallee()->getNameAsString() +
                ", which launches it with its original argument list"
          : "taken for something other than a <<<>>> launch (a graph node, "
            "function pointer or table launches it with its original "
            "argument list)";
  FunctionFacts &F = Ctx.functionFacts(SM, Pattern);
  F.AddressTaken = true;

  // Whether the use can name the original overload.
  const auto *In = Result.Nodes.getNodeAs<FunctionDecl>("in");
  const bool OnDevice =
      (In && runsOnDevice(*In)) || Result.Nodes.getNodeAs<VarDecl>("devvar");
  const bool NoOverload =
      Pattern->isExternC() || (Pattern->getNumParams() > 0 &&
                               Pattern->getParamDecl(0)->isParameterPack());
  const bool Deduced =
      Named->getPrimaryTemplate() && !Use->hasExplicitTemplateArgs();
  // decltype(k) would become the type of a pointer.
  const bool Unevaluated = Use->isNonOdrUse() == NOUR_Unevaluated;
  std::optional<Edit> E;
  if (!OnDevice && !NoOverload && !Deduced && !Unevaluated &&
      !overloadedInSource(*Pattern) &&
      rewrittenDeclaredBefore(*Pattern, Use->getBeginLoc(), SM, Ctx))
    E = wrapKernelName(operandOf(*Use, AST), SM, AST.getLangOpts(), Ctx,
                       [](llvm::StringRef Text) {
                         return "smpart::original(" + Text.str() + ", " +
                                Text.str() + ")";
                       });
  Hazard Refusal;
  if (Kind == KernelHazards::NameUse::LaunchApi) {
    // The _ptsz name is pasted by a macro: point at its use.
    SourceLocation Where = Api->getBeginLoc();
    if (SM.isWrittenInScratchSpace(SM.getSpellingLoc(Where)))
      Where = SM.getExpansionLoc(Where);
    Refusal = {"launched through " + Api->getDirectCallee()->getNameAsString() +
                   ", whose argument list smpart cannot rewrite",
               RewriteContext::placeOf(SM, Where),
               {},
               KernelHazards::ApiLaunches};
  } else {
    Refusal = {"its address is taken at line " + std::to_string(At.Line) +
                   " for something other than a <<<>>> launch (a graph "
                   "node, function pointer or table would launch it with "
                   "its original arguments)",
               RewriteContext::placeOf(SM, Pattern->getLocation()),
               {{At, "address of the kernel taken here"}}};
  }
  if (!E) {
    F.Hazards.insert(std::move(Refusal));
    return;
  }
  F.Edits.insert(*E);
  F.OriginalUses.insert({At, How});
  F.UnlaunchedHazards.insert(std::move(Refusal));
}

} // namespace smpart
