#include "analysis/DispatchTargets.h"

#include "analysis/DeviceCode.h"

#include "clang/AST/DeclTemplate.h"
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
    name(Ref, Ref->getDecl());
    return true;
  }
  // A static member function named through an object (`s.f`, `this->f`).
  bool VisitMemberExpr(MemberExpr *Member) {
    if (const auto *M = dyn_cast<CXXMethodDecl>(Member->getMemberDecl());
        M && M->isStatic())
      name(Member, M);
    return true;
  }
  // A function given another function type by a cast (`(F)f`, through
  // `void *`): called through a pointer of any type.
  bool VisitExplicitCastExpr(ExplicitCastExpr *Cast) {
    const Expr *E = stripUnary(*Cast->getSubExpr(), UO_AddrOf);
    const ValueDecl *D = nullptr;
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
      D = Ref->getDecl();
    else if (const auto *Member = dyn_cast<MemberExpr>(E))
      D = Member->getMemberDecl();
    if (const auto *Fn = dyn_cast_or_null<FunctionDecl>(D);
        Fn && deviceFunction(*Fn))
      Retyped.push_back(Fn);
    return true;
  }
  bool VisitCXXRecordDecl(CXXRecordDecl *R) {
    if (R->isThisDeclarationADefinition())
      Classes.push_back(R);
    return true;
  }
  bool VisitCXXMethodDecl(CXXMethodDecl *M) {
    if (const auto *Conv = dyn_cast<CXXConversionDecl>(M))
      if (M->getParent()->isLambda() &&
          Conv->getConversionType()->isFunctionPointerType() && M->isUsed())
        lambda(*M->getParent());
    if (M->isVirtual() && runsOnDevice(*M) && !M->isPureVirtual())
      Virtuals.push_back(M);
    return true;
  }

  std::set<const Expr *> Callees;
  std::vector<std::pair<const Expr *, const FunctionDecl *>> Named;
  std::vector<const FunctionDecl *> Lambdas, Retyped;
  std::vector<const CXXMethodDecl *> Virtuals;
  std::vector<const CXXRecordDecl *> Classes;

private:
  static bool deviceFunction(const FunctionDecl &Fn) {
    return !Fn.hasAttr<CUDAGlobalAttr>() && runsOnDevice(Fn);
  }
  void name(const Expr *Use, const ValueDecl *D) {
    if (const auto *Fn = dyn_cast<FunctionDecl>(D); Fn && deviceFunction(*Fn))
      Named.push_back({Use, Fn});
  }
  /// A lambda made a pointer: its call operator, or every instance of it
  /// (a generic lambda's conversion is a template too).
  void lambda(const CXXRecordDecl &Closure) {
    const CXXMethodDecl *Op = Closure.getLambdaCallOperator();
    if (!Op)
      return;
    Lambdas.push_back(Op);
    if (const FunctionTemplateDecl *T = Op->getDescribedFunctionTemplate())
      for (const FunctionDecl *Instance : T->specializations())
        Lambdas.push_back(Instance);
  }
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
  Retyped.clear();
  Classes.clear();
  Virtuals.clear();
  Collector C;
  C.TraverseDecl(AST.getTranslationUnitDecl());
  for (const auto &[Use, Fn] : C.Named)
    if (!C.Callees.count(Use))
      addOnce(AddressTaken, Fn->getCanonicalDecl());
  for (const FunctionDecl *Op : C.Lambdas)
    addOnce(LambdaInvokers, Op);
  for (const FunctionDecl *Fn : C.Retyped)
    addOnce(Retyped, Fn->getCanonicalDecl());
  Classes = C.Classes;
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
  // Parameters and result only: attributes such as noreturn are part of a
  // function's type but not of what the pointer can hold. A lambda's
  // pointer calls its call operator, whose type is the pointer's without
  // the class. A function cast to another type may be called through any.
  const auto &Proto = *Fn->castAs<FunctionProtoType>();
  std::vector<const FunctionDecl *> Out;
  for (const FunctionDecl *F : AddressTaken)
    if (sameSignature(*F, Proto, AST))
      Out.push_back(F);
  for (const FunctionDecl *Op : LambdaInvokers)
    if (sameSignature(*Op, Proto, AST))
      Out.push_back(Op);
  for (const FunctionDecl *F : Retyped)
    addOnce(Out, F);
  if (Out.empty())
    return std::nullopt;
  return Out;
}

std::optional<std::vector<const FunctionDecl *>>
DispatchTargets::of(const CallExpr &Call, const ASTContext &AST) {
  const auto *Method = dyn_cast_or_null<CXXMethodDecl>(Call.getDirectCallee());
  if (!Method)
    return ofPointer(Call.getCallee()->IgnoreParenImpCasts()->getType(), AST);
  // A virtual destructor may be one no class declared (implicit, lazily
  // declared by clang): destroyedAs() lists those by class instead.
  if (AST.getLangOpts().GPURelocatableDeviceCode ||
      isa<CXXDestructorDecl>(Method))
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

std::optional<std::vector<const CXXRecordDecl *>>
DispatchTargets::destroyedAs(const CXXRecordDecl &Static,
                             const ASTContext &AST) {
  if (AST.getLangOpts().GPURelocatableDeviceCode)
    return std::nullopt;
  collect(AST);
  std::vector<const CXXRecordDecl *> Out{&Static};
  for (const CXXRecordDecl *R : Classes)
    if (R->hasDefinition() && R->isDerivedFrom(&Static))
      Out.push_back(R);
  return Out;
}

} // namespace smpart
