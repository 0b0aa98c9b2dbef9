#include "rewrite/OriginalKernel.h"

#include "pipeline/RewriteContext.h"
#include "pipeline/TransformPlanner.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace smpart {

/// Where the text of a kernel's declaration starts: its template header if
/// any, and `__global__` (itself a macro) where it is written.
static SourceLocation declarationBegin(const FunctionDecl &D,
                                       const SourceManager &SM) {
  SourceLocation Begin = D.getOuterLocStart();
  if (const FunctionTemplateDecl *T = D.getDescribedFunctionTemplate())
    Begin = T->getBeginLoc();
  return SM.getExpansionLoc(Begin);
}

/// `Text` at `Begin`, introduced by a comment and bracketed by #line
/// directives naming Begin's line, so that later lines keep their numbers.
static std::optional<Edit> copyAt(SourceLocation Begin, SourceLocation End,
                                  llvm::StringRef Suffix,
                                  const SourceManager &SM) {
  bool Invalid = false;
  llvm::StringRef Buffer = SM.getBufferData(SM.getFileID(Begin), &Invalid);
  const unsigned B0 = SM.getFileOffset(Begin), B1 = SM.getFileOffset(End);
  if (Invalid || End.isMacroID() || SM.getFileID(Begin) != SM.getFileID(End) ||
      B1 <= B0 || B1 > Buffer.size())
    return std::nullopt;
  const std::string At = TransformPlanner::lineDirective(
      SM.getPresumedLineNumber(Begin), RewriteContext::lineFileOf(SM, Begin));
  // Both the copy and the declaration after it keep the indentation.
  const size_t LineStart = Buffer.rfind('\n', B0) + 1; // npos + 1 == 0
  llvm::StringRef Indent = Buffer.slice(LineStart, B0);
  if (Indent.find_first_not_of(" \t") != llvm::StringRef::npos)
    Indent = "";
  return Edit{RewriteContext::fileOf(SM, Begin), B0, 0,
              "// smpart: the original kernel, for translation units that "
              "launch it directly\n" +
                  At + Indent.str() + Buffer.slice(B0, B1).str() +
                  Suffix.str() + "\n" + At + Indent.str()};
}

std::optional<Edit> copyOfDefinition(const FunctionDecl &Kernel,
                                     const CompoundStmt &Body,
                                     const SourceManager &SM) {
  return copyAt(declarationBegin(Kernel, SM),
                Body.getRBracLoc().getLocWithOffset(1), "", SM);
}

std::optional<Edit> copyOfDeclaration(const FunctionDecl &D,
                                      const SourceManager &SM,
                                      const LangOptions &LO) {
  const SourceLocation Last = D.getSourceRange().getEnd();
  if (Last.isMacroID())
    return std::nullopt;
  return copyAt(declarationBegin(D, SM),
                Lexer::getLocForEndOfToken(Last, 0, SM, LO), ";", SM);
}

} // namespace smpart
