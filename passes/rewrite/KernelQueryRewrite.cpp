#include "rewrite/KernelQueryRewrite.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void KernelQueryRewrite::registerMatchers(MatchFinder &Finder) {
  // Instantiations share the pattern's text: rewritten once, there.
  Finder.addMatcher(declRefExpr(to(functionDecl(hasAttr(attr::CUDAGlobal))),
                                unless(isInTemplateInstantiation()))
                        .bind("ref"),
                    this);
}

/// True for the runtime API calls that take a kernel to query or configure
/// it, without launching it (KernelHazards calls the same uses queries).
static bool isKernelQuery(const FunctionDecl &Callee) {
  if (!Callee.getIdentifier())
    return false;
  llvm::StringRef Name = Callee.getName();
  return Name.starts_with("cudaOccupancy") || Name.starts_with("cudaFuncGet") ||
         Name.starts_with("cudaFuncSet");
}

/// The expression to replace: the name, or `&name`, when it is an argument
/// of a kernel query (through parentheses and casts), else null.
static const Expr *queriedKernelExpr(const DeclRefExpr &Ref, ASTContext &AST) {
  const Expr *Operand = &Ref;
  const Stmt *Child = &Ref;
  DynTypedNodeList Parents = AST.getParents(Ref);
  while (Parents.size() == 1) {
    const Stmt *P = Parents[0].get<Stmt>();
    if (!P)
      return nullptr;
    if (const auto *Call = dyn_cast<CallExpr>(P)) {
      const FunctionDecl *Callee = Call->getDirectCallee();
      return Callee && Call->getCallee() != Child && isKernelQuery(*Callee)
                 ? Operand
                 : nullptr;
    }
    const auto *Unary = dyn_cast<UnaryOperator>(P);
    if (Unary && Unary->getOpcode() == UO_AddrOf && Child == Operand)
      Operand = Unary;
    else if (!isa<ImplicitCastExpr, ParenExpr, CStyleCastExpr, CXXNamedCastExpr,
                  CXXFunctionalCastExpr>(P))
      return nullptr;
    Child = P;
    Parents = AST.getParents(*P);
  }
  return nullptr;
}

void KernelQueryRewrite::run(const MatchFinder::MatchResult &Result) {
  const auto *Ref = Result.Nodes.getNodeAs<DeclRefExpr>("ref");
  const SourceManager &SM = *Result.SourceManager;
  const auto *Kernel = dyn_cast<FunctionDecl>(Ref->getDecl());
  const FunctionDecl *Pattern = RewriteContext::patternOf(Kernel);
  if (!Pattern->hasBody() || !Ctx.isRewritable(SM, Pattern->getLocation()) ||
      RewriteContext::isGeneratedKernel(*Pattern))
    return;
  const Expr *Operand = queriedKernelExpr(*Ref, *Result.Context);
  if (!Operand || Operand->getBeginLoc().isMacroID() ||
      Ref->getEndLoc().isMacroID())
    return;
  const LangOptions &LO = Result.Context->getLangOpts();
  const llvm::StringRef Name = Lexer::getSourceText(
      CharSourceRange::getTokenRange(Ref->getSourceRange()), SM, LO);
  const SourceLocation End =
      Lexer::getLocForEndOfToken(Operand->getEndLoc(), 0, SM, LO);
  if (Name.empty() || End.isInvalid())
    return;
  if (std::optional<Edit> E = RewriteContext::replace(
          SM, Operand->getBeginLoc(), End,
          RewriteContext::rewrittenOverload(*Kernel, Name, *Result.Context)))
    Ctx.functionFacts(SM, Pattern).Edits.insert(*E);
}

} // namespace smpart
