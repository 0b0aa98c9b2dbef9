#include "rewrite/TemplateArgSpelling.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/QualTypeNames.h"

using namespace clang;

namespace smpart {

static bool isUnspellable(QualType T, SpellingScope Where);
static bool isUnspellable(const TagDecl &D, SpellingScope Where);

static bool anyUnspellable(llvm::ArrayRef<TemplateArgument> Args,
                           SpellingScope Where) {
  for (const TemplateArgument &A : Args) {
    if (A.getKind() == TemplateArgument::Pack &&
        anyUnspellable(A.pack_elements(), Where))
      return true;
    if (A.getKind() == TemplateArgument::Type &&
        isUnspellable(A.getAsType(), Where))
      return true;
  }
  return false;
}

/// True when no spelling at `Where` names `T` (spellTemplateArgs).
static bool isUnspellable(QualType T, SpellingScope Where) {
  T = T.getCanonicalType();
  while (true) {
    if (const auto *P = T->getAs<PointerType>())
      T = P->getPointeeType();
    else if (const auto *R = T->getAs<ReferenceType>())
      T = R->getPointeeType();
    else if (const ArrayType *A = T->getAsArrayTypeUnsafe())
      T = A->getElementType();
    else
      break;
  }
  if (const auto *M = T->getAs<MemberPointerType>()) {
    const CXXRecordDecl *Class = M->getMostRecentCXXRecordDecl();
    return (Class && isUnspellable(*Class, Where)) ||
           isUnspellable(M->getPointeeType(), Where);
  }
  if (const auto *F = T->getAs<FunctionProtoType>()) {
    for (QualType P : F->param_types())
      if (isUnspellable(P, Where))
        return true;
    return isUnspellable(F->getReturnType(), Where);
  }
  const TagDecl *D = T->getAsTagDecl();
  return D && isUnspellable(*D, Where);
}

static bool isUnspellable(const TagDecl &D, SpellingScope Where) {
  if (!D.getDeclName() && !D.getTypedefNameForAnonDecl())
    return true; // an unnamed class or enum
  if (const auto *R = dyn_cast<CXXRecordDecl>(&D); R && R->isLambda())
    return true;
  if (Where == SpellingScope::Global) {
    if (D.getParentFunctionOrMethod())
      return true;
    for (const Decl *In = &D; In->getDeclContext()->isRecord();
         In = cast<Decl>(In->getDeclContext()))
      if (In->getAccess() != AS_public)
        return true;
  }
  if (const auto *S = dyn_cast<ClassTemplateSpecializationDecl>(&D))
    return anyUnspellable(S->getTemplateArgs().asArray(), Where);
  return false;
}

/// The arguments, comma-separated, without brackets.
static std::optional<std::string>
spellList(llvm::ArrayRef<TemplateArgument> Args, const ASTContext &AST,
          SpellingScope Where, const PrintingPolicy &Policy) {
  std::string Out;
  for (const TemplateArgument &A : Args) {
    std::string One;
    if (A.getKind() == TemplateArgument::Pack) {
      std::optional<std::string> Inner =
          spellList(A.pack_elements(), AST, Where, Policy);
      if (!Inner)
        return std::nullopt;
      One = *Inner;
    } else if (A.getKind() == TemplateArgument::Type) {
      if (isUnspellable(A.getAsType(), Where))
        return std::nullopt;
      One = TypeName::getFullyQualifiedName(A.getAsType(), AST, Policy);
    } else if (A.getKind() == TemplateArgument::Integral) {
      if (isUnspellable(A.getIntegralType(), Where))
        return std::nullopt;
      llvm::raw_string_ostream OS(One);
      A.print(Policy, OS, /*IncludeType=*/true);
    } else {
      return std::nullopt;
    }
    if (One.empty())
      continue; // an empty pack
    Out += (Out.empty() ? "" : ", ") + One;
  }
  return Out;
}

std::optional<std::string>
spellTemplateArgs(llvm::ArrayRef<TemplateArgument> Args, const ASTContext &AST,
                  SpellingScope Where) {
  PrintingPolicy Policy = AST.getPrintingPolicy();
  Policy.SuppressUnwrittenScope = true; // no `(anonymous namespace)::`
  std::optional<std::string> List = spellList(Args, AST, Where, Policy);
  if (!List)
    return std::nullopt;
  return "<" + *List + ">";
}

} // namespace smpart
