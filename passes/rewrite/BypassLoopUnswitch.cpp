#include "rewrite/BypassLoopUnswitch.h"

#include "pipeline/RewriteContext.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace smpart {

namespace {

/// Finds what a second copy of a text would change: a label defined
/// twice, a `case` that would belong to the enclosing switch twice, a
/// static or __shared__ local that would become two objects, asm whose
/// labels would be defined twice.
class DuplicationObstacle : public RecursiveASTVisitor<DuplicationObstacle> {
public:
  bool Found = false;

  bool VisitLabelStmt(LabelStmt *) { return found(); }
  bool VisitAddrLabelExpr(AddrLabelExpr *) { return found(); }
  bool VisitAsmStmt(AsmStmt *) { return found(); }
  bool VisitVarDecl(VarDecl *V) {
    if (V->isStaticLocal() || V->hasExternalStorage() ||
        V->hasAttr<CUDASharedAttr>())
      return found();
    return true;
  }
  bool TraverseSwitchStmt(SwitchStmt *S) {
    ++Switches;
    const bool Ok = RecursiveASTVisitor::TraverseSwitchStmt(S);
    --Switches;
    return Ok;
  }
  bool VisitSwitchCase(SwitchCase *) { return Switches > 0 || found(); }

private:
  bool found() {
    Found = true;
    return false;
  }
  int Switches = 0;
};

bool isLoop(const Stmt &S) {
  return isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
}

bool hasObstacle(const Stmt &S) {
  DuplicationObstacle Obstacle;
  Obstacle.TraverseStmt(const_cast<Stmt *>(&S));
  return Obstacle.Found;
}

/// The statement of a template's pattern that begins where `S` does and
/// is of its class: it still holds the branches `if constexpr` discarded
/// from the instance.
class PatternStmt : public RecursiveASTVisitor<PatternStmt> {
public:
  explicit PatternStmt(const Stmt &S) : Of(S) {}
  const Stmt *Found = nullptr;
  bool VisitStmt(Stmt *S) {
    if (S->getStmtClass() == Of.getStmtClass() &&
        S->getBeginLoc() == Of.getBeginLoc())
      Found = S;
    return !Found;
  }

private:
  const Stmt &Of;
};

/// hasObstacle(), in the instance and in the template's pattern.
bool hasObstacle(const Stmt &S, const FunctionDecl &Kernel) {
  if (hasObstacle(S))
    return true;
  const FunctionDecl *Pattern = Kernel.getTemplateInstantiationPattern();
  if (!Pattern || Pattern == &Kernel)
    return false;
  PatternStmt Finder(S);
  Finder.TraverseStmt(Pattern->getBody());
  return !Finder.Found || hasObstacle(*Finder.Found);
}

/// The statement ends with a `;` that its source range leaves out (an
/// expression, a jump, a do-while), not with a `}` or a declaration's `;`.
bool endsWithSemi(const Stmt *S) {
  while (S) {
    if (isa<CompoundStmt, DeclStmt, NullStmt>(S)) // `}`, or their `;` in range
      return false;
    if (const auto *For = dyn_cast<ForStmt>(S))
      S = For->getBody();
    else if (const auto *While = dyn_cast<WhileStmt>(S))
      S = While->getBody();
    else if (const auto *Range = dyn_cast<CXXForRangeStmt>(S))
      S = Range->getBody();
    else if (const auto *If = dyn_cast<IfStmt>(S))
      S = If->getElse() ? If->getElse() : If->getThen();
    else if (const auto *Switch = dyn_cast<SwitchStmt>(S))
      S = Switch->getBody();
    else if (const auto *Label = dyn_cast<LabelStmt>(S))
      S = Label->getSubStmt();
    else if (const auto *Attributed = dyn_cast<AttributedStmt>(S))
      S = Attributed->getSubStmt();
    else
      return true; // DoStmt included
  }
  return false;
}

/// The nearest line before `Offset` that is not blank or a // comment
/// starts with `#`: a directive that may belong to the loop (a #pragma
/// unroll, the #endif of a conditional one), which would end up in front
/// of the test of the tag.
bool followsDirective(StringRef Buffer, unsigned Offset) {
  StringRef Before = Buffer.take_front(Offset);
  Before = Before.take_front(Before.rfind('\n') + 1); // whole lines only
  while (!Before.empty()) {
    Before = Before.drop_back(); // its newline
    const size_t Start = Before.rfind('\n');
    const StringRef Line =
        Before.substr(Start == StringRef::npos ? 0 : Start + 1).trim();
    if (!Line.empty() && !Line.starts_with("//"))
      return Line.starts_with("#");
    Before = Before.take_front(Start == StringRef::npos ? 0 : Start + 1);
  }
  return false;
}

/// The file offset of the start of Loc's line.
unsigned lineStart(const SourceManager &SM, SourceLocation Loc) {
  const FileIDAndOffset Decomposed = SM.getDecomposedLoc(Loc);
  const StringRef Buffer = SM.getBufferData(Decomposed.first);
  const size_t Newline = Buffer.rfind('\n', Decomposed.second);
  return Newline == StringRef::npos ? 0 : static_cast<unsigned>(Newline + 1);
}

} // namespace

std::optional<TagSwitchedText> BypassLoopUnswitch::describe(const Stmt &First,
                                                            const Stmt &Last,
                                                            ASTContext &AST) {
  const SourceManager &SM = AST.getSourceManager();
  const LangOptions &LO = AST.getLangOpts();
  // `#pragma unroll` makes an AttributedStmt of loop hints around a loop:
  // its lines go into each copy, so that they still precede the loop.
  const AttributedStmt *Hints = dyn_cast<AttributedStmt>(&First);
  for (const DynTypedNode &P : AST.getParents(First))
    if (!Hints)
      Hints = P.get<AttributedStmt>();
  const Stmt &Head = Hints && Hints == &First ? *Hints->getSubStmt() : First;
  // The text in the file; a macro at either end must be all of it
  // (`for (...) sum += TWICE(b[j])`), not more.
  const CharSourceRange Range = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(Head.getBeginLoc(), Last.getEndLoc()), SM,
      LO);
  if (Range.isInvalid())
    return std::nullopt;
  const SourceLocation Begin = Range.getBegin();
  SourceLocation End = Range.getEnd();
  unsigned BeginOffset = SM.getFileOffset(Begin);
  if (Hints)
    for (const Attr *A : Hints->getAttrs()) {
      const SourceLocation At = A->getLocation();
      if (!isa<LoopHintAttr>(A) || At.isInvalid() || At.isMacroID() ||
          SM.getFileID(At) != SM.getFileID(Begin))
        return std::nullopt;
      BeginOffset = std::min(BeginOffset, lineStart(SM, At));
    }

  // A range ends at its last token, before the `;` of an expression, a
  // jump or a do-while (also as a loop's body): the copies need it.
  if (endsWithSemi(&Last)) {
    const SourceLocation LastToken =
        Lexer::GetBeginningOfToken(End.getLocWithOffset(-1), SM, LO);
    const std::optional<Token> Next = Lexer::findNextToken(LastToken, SM, LO);
    if (!Next || !Next->is(tok::semi) || Next->getLocation().isMacroID())
      return std::nullopt; // e.g. a `;` spelled in a macro
    End = Next->getEndLoc();
  }

  const FileID File = SM.getFileID(Begin);
  const StringRef Buffer = SM.getBufferData(File);
  const unsigned EndOffset = SM.getFileOffset(End);
  if (EndOffset <= BeginOffset || EndOffset > Buffer.size() ||
      followsDirective(Buffer, BeginOffset))
    return std::nullopt;
  // Directives other than #pragma could open or close a conditional
  // around part of the text, or define a macro twice.
  StringRef Rest = Buffer.substr(BeginOffset, EndOffset - BeginOffset);
  while (!Rest.empty()) {
    auto [Line, Next] = Rest.split('\n');
    const StringRef Code = Line.ltrim();
    if (Code.starts_with("#") &&
        !Code.drop_front().ltrim().starts_with("pragma"))
      return std::nullopt;
    Rest = Next;
  }
  const SourceLocation BeginLoc = SM.getComposedLoc(File, BeginOffset);
  TagSwitchedText L;
  L.File = RewriteContext::fileOf(SM, BeginLoc);
  L.Begin = BeginOffset;
  L.End = EndOffset;
  // Where the text is as diagnostics name it: its own file (it may be in
  // a file the body includes), or what a #line before it says.
  L.LineFile = RewriteContext::lineFileOf(SM, BeginLoc);
  L.Line = SM.getPresumedLineNumber(BeginLoc);
  L.Col = SM.getSpellingColumnNumber(BeginLoc);
  L.EndLine = SM.getPresumedLoc(End).getLine();
  L.EndCol = SM.getSpellingColumnNumber(End);
  return L;
}

/// Records that the text at `S` cannot be written twice (in this parse).
static void refuse(const Stmt &S, ASTContext &AST, FunctionFacts &F) {
  const SourceManager &SM = AST.getSourceManager();
  const SourceLocation At = SM.getExpansionLoc(S.getBeginLoc());
  F.UnswitchRefused.insert(
      {RewriteContext::fileOf(SM, At), SM.getFileOffset(At)});
}

const std::optional<TagSwitchedText> &
BypassLoopUnswitch::copyable(const Stmt &S, const FunctionDecl &Kernel,
                             ASTContext &AST, FunctionFacts &F) {
  auto [It, New] = Described.try_emplace(&S);
  std::optional<TagSwitchedText> &R = It->second;
  if (!New)
    return R;
  // The other parse may see what this one does not (a macro defined for
  // the device only): what either refuses stays refused.
  if (&S != Kernel.getBody()) { // a loop
    if (!hasObstacle(S, Kernel))
      R = describe(S, S, AST);
    if (!R)
      refuse(S, AST, F);
    return R;
  }
  // The whole body, if nothing in it prevents a second copy. A body after
  // its __shared__ declarations would do as well, but on three of the 36
  // test_inputs kernels (nbody_forces, jacobi5_shared, transpose_tiled)
  // ptxas then took 40 registers instead of 32, a quarter of the resident
  // CTAs; their loops alone cost none.
  const auto &Body = cast<CompoundStmt>(S);
  for (const Stmt *B : Body.body())
    if (hasObstacle(*B, Kernel)) {
      refuse(*B, AST, F);
      return R;
    }
  if (!Body.body_empty()) {
    R = describe(**Body.body_begin(), *Body.body_back(), AST);
    if (!R)
      refuse(**Body.body_begin(), AST, F);
  }
  return R;
}

void BypassLoopUnswitch::noteLoad(const Expr &Access,
                                  const FunctionDecl &Kernel, ASTContext &AST,
                                  FunctionFacts &F) {
  // Up from the load to the body, through its loops; a lambda ends the
  // walk (its body may run where the tag is another's). The whole body, if
  // it can be written twice, holds every loop.
  std::optional<TagSwitchedText> Outermost;
  DynTypedNodeList Parents = AST.getParents(Access);
  while (!Parents.empty()) {
    const DynTypedNode &P = Parents[0];
    if (P.get<LambdaExpr>() ||
        (P.get<Decl>() && !P.get<VarDecl>())) // the function's own
      break;
    const Stmt *S = P.get<Stmt>();
    const bool IsBody = S && S == Kernel.getBody();
    if (S && (IsBody || isLoop(*S)))
      if (const auto &T = copyable(*S, Kernel, AST, F))
        Outermost = T;
    if (IsBody)
      break;
    Parents = AST.getParents(P);
  }
  if (Outermost)
    F.TagSwitchedTexts.insert(std::move(*Outermost));
}

} // namespace smpart
