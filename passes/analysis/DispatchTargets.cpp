#include "analysis/DispatchTargets.h"

#include "analysis/DeviceCode.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

#include <algorithm>
#include <set>

using namespace clang;

namespace smpart {

namespace {

/// Device functions named anywhere (function bodies, global initialisers,
/// template instantiations) and lambdas turned into function pointers.
class Collector : public RecursiveASTVisitor<Collector> {
public:
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return true; }

  bool VisitCallExpr(CallExpr *Call) {
    if (const Expr *Callee = Call->getCallee())
      Callees.insert(Callee->IgnoreParenImpCasts());
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    if (const auto *Fn = dyn_cast<FunctionDecl>(Ref->getDecl()))
      if (!Fn->hasAttr<CUDAGlobalAttr>() && runsOnDevice(*Fn))
        Named.push_back({Ref, Fn});
    return true;
  }
  bool VisitCXXMethodDecl(CXXMethodDecl *M) {
    if (const auto *Conv = dyn_cast<CXXConversionDecl>(M))
      if (M->getParent()->isLambda() &&
          Conv->getConversionType()->isFunctionPointerType() && M->isUsed())
        if (const CXXMethodDecl *Op = M->getParent()->getLambdaCallOperator())
          Lambdas.push_back(Op);
    if (M->isVirtual() && runsOnDevice(*M) && !M->isPureVirtual())
      Virtuals.push_back(M);
    return true;
  }

  std::set<const Expr *> Callees;
  std::vector<std::pair<const DeclRefExpr *, const FunctionDecl *>> Named;
  std::vector<const FunctionDecl *> Lambdas;
  std::vector<const CXXMethodDecl *> Virtuals;
};

/// True if \p M is \p Base or overrides it, directly or not.
bool overrides(const CXXMethodDecl &M, const CXXMethodDecl &Base) {
  if (M.getCanonicalDecl() == Base.getCanonicalDecl())
    return true;
  return std::any_of(
      M.overridden_methods().begin(), M.overridden_methods().end(),
      [&](const CXXMethodDecl *O) { return overrides(*O, Base); });
}

/// True if \p Fn takes and returns what a function of type \p T does.
bool sameSignature(const FunctionDecl &Fn, const FunctionProtoType &T,
                   const ASTContext &AST) {
  if (Fn.getNumParams() != T.getNumParams() ||
      Fn.isVariadic() != T.isVariadic() ||
      !AST.hasSameType(Fn.getReturnType(), T.getReturnType()))
    return false;
  for (unsigned I = 0; I < T.getNumParams(); ++I)
    if (!AST.hasSameUnqualifiedType(Fn.getParamDecl(I)->getType(),
                                    T.getParamType(I)))
      return false;
  return true;
}

template <class T, class U> void addOnce(std::vector<T> &V, U *X) {
  if (std::find(V.begin(), V.end(), X) == V.end())
    V.push_back(X);
}

} // namespace

void DispatchTargets::collect(const ASTContext &AST) {
  if (Seen == &AST)
    return;
  Seen = &AST;
  AddressTaken.clear();
  LambdaInvokers.clear();
  Virtuals.clear();
  Collector C;
  C.TraverseDecl(AST.getTranslationUnitDecl());
  for (const auto &[Ref, Fn] : C.Named)
    if (!C.Callees.count(Ref))
      addOnce(AddressTaken, Fn->getCanonicalDecl());
  for (const FunctionDecl *Op : C.Lambdas)
    addOnce(LambdaInvokers, Op);
  for (const CXXMethodDecl *M : C.Virtuals)
    addOnce(Virtuals, M->getCanonicalDecl());
}

std::optional<std::vector<const FunctionDecl *>>
DispatchTargets::ofPointer(QualType Pointer, const ASTContext &AST) {
  if (AST.getLangOpts().GPURelocatableDeviceCode)
    return std::nullopt;
  QualType Fn = Pointer.getNonReferenceType();
  if (const auto *P = Fn->getAs<PointerType>())
    Fn = P->getPointeeType();
  if (!Fn->isFunctionType())
    return std::nullopt; // a pointer to member, or not a function at all
  collect(AST);
  std::vector<const FunctionDecl *> Out;
  for (const FunctionDecl *F : AddressTaken)
    if (AST.hasSameFunctionTypeIgnoringExceptionSpec(F->getType(), Fn))
      Out.push_back(F);
  // A lambda's function pointer calls its call operator, whose type is
  // the pointer's without the class.
  for (const FunctionDecl *Op : LambdaInvokers)
    if (sameSignature(*Op, *Fn->castAs<FunctionProtoType>(), AST))
      Out.push_back(Op);
  if (Out.empty())
    return std::nullopt;
  return Out;
}

std::optional<std::vector<const FunctionDecl *>>
DispatchTargets::of(const CallExpr &Call, const ASTContext &AST) {
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(Call.getDirectCallee());
  if (!Method)
    return ofPointer(Call.getCallee()->IgnoreParenImpCasts()->getType(), AST);
  if (AST.getLangOpts().GPURelocatableDeviceCode)
    return std::nullopt;
  collect(AST);
  std::vector<const FunctionDecl *> Out;
  for (const CXXMethodDecl *M : Virtuals)
    if (overrides(*M, *Method))
      Out.push_back(M);
  if (Out.empty())
    return std::nullopt;
  return Out;
}

} // namespace smpart
