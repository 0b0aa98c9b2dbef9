#include "pipeline/RewriteContext.h"

#include "pipeline/CanonicalPath.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "llvm/Support/Path.h"

using namespace clang;

namespace smpart {

bool RewriteContext::isRewritable(const SourceManager &SM,
                                  SourceLocation Loc) const {
  SourceLocation File = SM.getSpellingLoc(Loc);
  if (File.isInvalid())
    return false;
  if (SM.isInMainFile(File))
    return true;
  if (!HeaderFilter || SM.isInSystemHeader(File))
    return false;
  OptionalFileEntryRef FE = SM.getFileEntryRefForID(SM.getFileID(File));
  return FE && HeaderFilter->match(FE->getName());
}

const FunctionDecl *RewriteContext::patternOf(const FunctionDecl *FD) {
  if (const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern())
    FD = Pattern;
  if (const FunctionDecl *Def = FD->getDefinition())
    return Def;
  return FD->getFirstDecl();
}

Place RewriteContext::placeOf(const SourceManager &SM, SourceLocation Loc) {
  PresumedLoc P = SM.getPresumedLoc(SM.getSpellingLoc(Loc));
  if (P.isInvalid())
    return {};
  return {P.getFilename(), P.getLine(), P.getColumn()};
}

std::string RewriteContext::fileOf(const SourceManager &SM,
                                   SourceLocation Loc) {
  // With -p, the compile command may name the file relative to its own
  // directory, which is the working directory of the parse but not of the
  // tool: edits must name the file the tool will read and write.
  llvm::SmallString<256> Path(SM.getFilename(SM.getSpellingLoc(Loc)));
  if (Path.empty())
    return {};
  SM.getFileManager().makeAbsolutePath(Path);
  return canonicalPath(Path);
}

std::string RewriteContext::lineFileOf(const SourceManager &SM,
                                       SourceLocation Loc) {
  std::string Name = SM.getPresumedLoc(Loc).getFilename();
  return Name == SM.getFilename(Loc) ? fileOf(SM, Loc) : Name;
}

std::string RewriteContext::keyOf(const SourceManager &SM,
                                  const FunctionDecl *FD) {
  const FunctionDecl *P = patternOf(FD);
  SourceLocation Loc = SM.getSpellingLoc(P->getLocation());
  return (fileOf(SM, Loc) + ":" + llvm::Twine(SM.getFileOffset(Loc))).str();
}

FunctionFacts &RewriteContext::functionFacts(const SourceManager &SM,
                                             const FunctionDecl *FD) {
  FunctionFacts &F = Facts.function(keyOf(SM, FD));
  if (F.Name.empty()) {
    const FunctionDecl *P = patternOf(FD);
    F.Name = P->getQualifiedNameAsString();
    F.Where = placeOf(SM, P->getLocation());
    F.IsKernel = P->hasAttr<CUDAGlobalAttr>();
  }
  return F;
}

std::optional<Edit> RewriteContext::replace(const SourceManager &SM,
                                            SourceLocation Begin,
                                            SourceLocation End,
                                            llvm::StringRef Text,
                                            bool AllowMacro) {
  if (!AllowMacro && (Begin.isMacroID() || End.isMacroID()))
    return std::nullopt;
  Begin = SM.getSpellingLoc(Begin);
  End = SM.getSpellingLoc(End);
  if (Begin.isInvalid() || End.isInvalid() ||
      SM.getFileID(Begin) != SM.getFileID(End))
    return std::nullopt;
  unsigned B = SM.getFileOffset(Begin), E = SM.getFileOffset(End);
  if (E < B)
    return std::nullopt;
  Edit Result;
  Result.File = fileOf(SM, Begin);
  Result.Offset = B;
  Result.Length = E - B;
  Result.Text = Text.str();
  return Result;
}

std::optional<Edit> RewriteContext::insert(const SourceManager &SM,
                                           SourceLocation At,
                                           llvm::StringRef Text,
                                           bool AllowMacro) {
  return replace(SM, At, At, Text, AllowMacro);
}

static bool takesLaunchControl(const FunctionDecl &FD) {
  if (FD.getNumParams() == 0)
    return false;
  const QualType T = FD.getParamDecl(0)->getType().getCanonicalType();
  const auto *Record = T->getAsCXXRecordDecl();
  return Record &&
         Record->getQualifiedNameAsString() == "smpart::LaunchControl";
}

bool RewriteContext::isGeneratedKernel(const FunctionDecl &FD) {
  if (takesLaunchControl(FD))
    return true;
  // The original definition an earlier run kept beside the persistent
  // overload (same scope and name, one more parameter in front).
  const FunctionDecl &Pattern = *patternOf(&FD);
  const DeclContext *Scope = Pattern.getDeclContext()->getRedeclContext();
  for (const NamedDecl *Other : Scope->lookup(Pattern.getDeclName())) {
    const FunctionDecl *Fn = Other->getAsFunction();
    if (Fn && Fn != &Pattern && Fn->hasAttr<CUDAGlobalAttr>() &&
        takesLaunchControl(*Fn) &&
        Fn->getNumParams() == Pattern.getNumParams() + 1)
      return true;
  }
  return false;
}

std::string RewriteContext::rewrittenOverload(const FunctionDecl &FD,
                                              llvm::StringRef Name,
                                              const ASTContext &AST) {
  PrintingPolicy Policy = AST.getPrintingPolicy();
  Policy.FullyQualifiedName = true;
  Policy.SuppressUnwrittenScope = true; // no `(anonymous namespace)::`
  std::string Out = "static_cast<void (*)(smpart::LaunchControl";
  for (const ParmVarDecl *P : FD.parameters())
    Out += ", " + P->getType().getAsString(Policy);
  return Out + ")>(&" + Name.str() + ")";
}

bool RewriteContext::wantsOriginal(const FunctionDecl &Definition,
                                   KeepOriginal Keep) {
  if (Definition.isExternC())
    return false;
  switch (Keep) {
  case KeepOriginal::All:
    return true;
  case KeepOriginal::External:
    return Definition.isExternallyVisible();
  case KeepOriginal::Headers:
    return false;
  }
  return false;
}

} // namespace smpart
