#include "rewrite/DeviceBlockIdRewrite.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace smpart {

void DeviceBlockIdRewrite::registerMatchers(MatchFinder &Finder) {
  auto NotKernel = functionDecl(unless(hasAttr(attr::CUDAGlobal)));
  Finder.addMatcher(
      declRefExpr(to(varDecl(hasAnyName("::blockIdx", "::gridDim"))),
                  forFunction(NotKernel.bind("fn")))
          .bind("ref"),
      this);
  Finder.addMatcher(
      callExpr(
          forFunction(functionDecl().bind("caller")),
          callee(
              functionDecl(unless(hasAttr(attr::CUDAGlobal))).bind("callee")))
          .bind("call"),
      this);
}

void DeviceBlockIdRewrite::run(const MatchFinder::MatchResult &Result) {
  const SourceManager &SM = *Result.SourceManager;
  if (const auto *Ref = Result.Nodes.getNodeAs<DeclRefExpr>("ref")) {
    const auto *Fn = Result.Nodes.getNodeAs<FunctionDecl>("fn");
    if (!Ctx.isRewritable(SM, Fn->getLocation()))
      return;
    FunctionFacts &F = Ctx.functionFacts(SM, Fn);
    F.ReadsBlockId = true;
    std::string Name = Ref->getDecl()->getName().str();
    std::optional<Edit> E = RewriteContext::replace(
        SM, Ref->getLocation(),
        Ref->getLocation().getLocWithOffset(static_cast<int>(Name.size())),
        "smpart::" + Name + "()");
    if (E)
      F.Edits.insert(*E);
    else
      F.Hazards.insert({"reads " + Name + " through a macro",
                        RewriteContext::placeOf(SM, Ref->getLocation()),
                        {}});
    return;
  }
  const auto *Caller = Result.Nodes.getNodeAs<FunctionDecl>("caller");
  const auto *Callee = Result.Nodes.getNodeAs<FunctionDecl>("callee");
  if (!Caller || !Callee || !Ctx.isRewritable(SM, Caller->getLocation()))
    return;
  const FunctionDecl *Target = RewriteContext::patternOf(Callee);
  if (!Target->hasBody() || !Ctx.isRewritable(SM, Target->getLocation()))
    return;
  FunctionFacts &CalleeFacts = Ctx.functionFacts(SM, Target);
  Ctx.functionFacts(SM, Caller).Callees.insert(CalleeFacts.Key);
}

} // namespace smpart
