#ifndef SMPART_ANALYSIS_DEVICECODE_H
#define SMPART_ANALYSIS_DEVICECODE_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include <vector>

namespace smpart {

/// True for a lambda's call operator that clang made implicitly __host__
/// __device__ (written without either), with `Outer` the function it is
/// written in (null at namespace scope): nvcc compiles it for that
/// function's side (host at namespace scope), so a launch inside a lambda
/// in a host function is a host launch.
inline bool implicitLambda(const clang::FunctionDecl &Fn,
                           const clang::FunctionDecl *&Outer) {
  const auto *Device = Fn.getAttr<clang::CUDADeviceAttr>();
  const auto *Method = llvm::dyn_cast<clang::CXXMethodDecl>(&Fn);
  if (!Device || !Device->isImplicit() || !Method ||
      !Method->getParent()->isLambda())
    return false;
  Outer = nullptr;
  for (const clang::DeclContext *DC = Method->getParent()->getDeclContext();
       DC && !Outer; DC = DC->getParent())
    Outer = llvm::dyn_cast<clang::FunctionDecl>(DC);
  return true;
}

/// True if nvcc compiles `Fn` for the device: a kernel, a function
/// declared __device__, or a lambda in one (implicitLambda).
inline bool runsOnDevice(const clang::FunctionDecl &Fn) {
  if (Fn.hasAttr<clang::CUDAGlobalAttr>())
    return true;
  const clang::FunctionDecl *Outer = nullptr;
  if (implicitLambda(Fn, Outer))
    return Outer && runsOnDevice(*Outer);
  return Fn.hasAttr<clang::CUDADeviceAttr>();
}

/// True for a declaration of CUDA's cooperative groups (its namespace, or
/// `cg`, which the lit tests' stub header uses).
inline bool inCooperativeGroups(const clang::Decl &D) {
  for (const clang::DeclContext *C = D.getDeclContext(); C; C = C->getParent())
    if (const auto *NS = llvm::dyn_cast<clang::NamespaceDecl>(C))
      if (NS->getName() == "cooperative_groups" || NS->getName() == "cg")
        return true;
  return false;
}

/// \p E without parentheses, implicit casts and one unary \p Op around
/// them (`&f`, `*p`).
inline const clang::Expr *stripUnary(const clang::Expr &E,
                                     clang::UnaryOperatorKind Op) {
  const clang::Expr *Inner = E.IgnoreParenImpCasts();
  if (const auto *U = llvm::dyn_cast<clang::UnaryOperator>(Inner);
      U && U->getOpcode() == Op)
    Inner = U->getSubExpr()->IgnoreParenImpCasts();
  return Inner;
}

/// True if \p E names a function (`f`, `&f`).
inline bool namesFunction(const clang::Expr &E) {
  const auto *Ref =
      llvm::dyn_cast<clang::DeclRefExpr>(stripUnary(E, clang::UO_AddrOf));
  return Ref && llvm::isa<clang::FunctionDecl>(Ref->getDecl());
}

/// The function \p Callee always reaches, where it names a local reference
/// or const pointer initialised with a function's name (`unsigned (&f)() =
/// row;`); null otherwise.
inline const clang::FunctionDecl *boundFunction(const clang::Expr &Callee) {
  const auto *Ref =
      llvm::dyn_cast<clang::DeclRefExpr>(stripUnary(Callee, clang::UO_Deref));
  const auto *Var =
      Ref ? llvm::dyn_cast<clang::VarDecl>(Ref->getDecl()) : nullptr;
  if (!Var || !Var->isLocalVarDecl() || !Var->getInit() ||
      !(Var->getType()->isReferenceType() || Var->getType().isConstQualified()))
    return nullptr;
  const auto *Named = llvm::dyn_cast<clang::DeclRefExpr>(
      stripUnary(*Var->getInit(), clang::UO_AddrOf));
  return Named ? llvm::dyn_cast<clang::FunctionDecl>(Named->getDecl())
               : nullptr;
}

/// True if \p Callee always reaches one function (boundFunction), which
/// the analyses follow where it is named.
inline bool boundToAFunction(const clang::Expr &Callee) {
  return boundFunction(Callee) != nullptr;
}

/// True for a call whose target is chosen at run time: through a pointer
/// (not a call still unresolved in a template pattern) or to a virtual
/// function not named with its class. Analyses that follow bodies cannot
/// follow it: it may reach any function.
inline bool dispatchesAtRunTime(const clang::CallExpr &Call) {
  if (Call.isTypeDependent() || Call.containsErrors())
    return false; // unresolved yet (a template pattern), or not at all
  const clang::FunctionDecl *Callee = Call.getDirectCallee();
  if (!Callee) {
    const clang::Expr *E = Call.getCallee();
    return E && !E->isTypeDependent() && !E->isValueDependent() &&
           !E->containsErrors() &&
           !llvm::isa<clang::CXXPseudoDestructorExpr>(
               E->IgnoreParenImpCasts()) &&
           !boundToAFunction(*E);
  }
  const auto *Method = llvm::dyn_cast<clang::CXXMethodDecl>(Callee);
  if (!Method || !Method->isVirtual() || Method->hasAttr<clang::FinalAttr>() ||
      Method->getParent()->hasAttr<clang::FinalAttr>())
    return false;
  const auto *Member = llvm::dyn_cast<clang::MemberExpr>(
      Call.getCallee()->IgnoreParenImpCasts());
  if (!Member)
    return true;
  if (Member->hasQualifier())
    return false;
  // Called on an object (not through a pointer or a reference): its type
  // is known, the call bound at compile time.
  const auto *Object = llvm::dyn_cast<clang::DeclRefExpr>(
      Member->getBase()->IgnoreParenImpCasts());
  const auto *Var =
      Object ? llvm::dyn_cast<clang::VarDecl>(Object->getDecl()) : nullptr;
  return Member->isArrow() || !Var || Var->getType()->isReferenceType();
}

/// True for a function the compiler made from a template for particular
/// arguments (its facts are its template's: one text is rewritten).
inline bool isInstantiation(const clang::FunctionDecl &Fn) {
  return Fn.isTemplateInstantiation() ||
         llvm::isa<clang::ClassTemplateSpecializationDecl>(Fn.getDeclContext());
}

/// True if nvcc compiles `Fn` for the device only: a kernel, a function
/// declared __device__ and not __host__, or a lambda in one. (Clang makes
/// constexpr functions implicitly __host__ __device__: both sides.)
inline bool runsOnlyOnDevice(const clang::FunctionDecl &Fn) {
  if (Fn.hasAttr<clang::CUDAGlobalAttr>())
    return true;
  const clang::FunctionDecl *Outer = nullptr;
  if (implicitLambda(Fn, Outer))
    return Outer && runsOnlyOnDevice(*Outer);
  const auto *Device = Fn.getAttr<clang::CUDADeviceAttr>();
  return Device && !Device->isImplicit() && !Fn.hasAttr<clang::CUDAHostAttr>();
}

/// True where the calls of \p In are checked for dispatch at run time: in
/// the device-side parse (the host side also sees the host-only branches
/// of __host__ __device__ code), and in a template instantiation only
/// where it runs on the device alone: a __host__ __device__ template may
/// be instantiated for host code only (a call through the function
/// pointer it is given there), and its facts are its template's, which
/// kernels instantiating it with a lambda share.
inline bool checkedForDispatch(const clang::FunctionDecl &In) {
  return In.getASTContext().getLangOpts().CUDAIsDevice &&
         (!isInstantiation(In) || runsOnlyOnDevice(In));
}

/// checkedForDispatch() for one call of \p In: in an instantiated
/// __device__ function, a call through its own parameter is not checked
/// there but where the function is called, by what it is given
/// (passedFunctionPointer: a function named there is followed as called
/// there). A kernel's parameters come from the host: checked.
inline bool checkedForDispatch(const clang::FunctionDecl &In,
                               const clang::CallExpr &Call) {
  if (!checkedForDispatch(In))
    return false;
  if (!isInstantiation(In) || In.hasAttr<clang::CUDAGlobalAttr>())
    return true;
  const auto *Ref = llvm::dyn_cast<clang::DeclRefExpr>(
      stripUnary(*Call.getCallee(), clang::UO_Deref));
  return !Ref || !llvm::isa<clang::ParmVarDecl>(Ref->getDecl());
}

/// The first argument of \p Call (a call or a construction) that gives
/// the callee a function pointer other than a function named there (which
/// the analyses follow as called there); null if none. Where the callee
/// is an instantiation, its calls through that pointer are checked here
/// (checkedForDispatch): the pointer may reach any function.
inline const clang::Expr *passedFunctionPointer(const clang::Expr &Call) {
  llvm::ArrayRef<const clang::Expr *> Args;
  if (const auto *C = llvm::dyn_cast<clang::CallExpr>(&Call))
    Args = {C->getArgs(), C->getNumArgs()};
  else if (const auto *C = llvm::dyn_cast<clang::CXXConstructExpr>(&Call))
    Args = {C->getArgs(), C->getNumArgs()};
  for (const clang::Expr *Arg : Args) {
    if (!Arg || Arg->isTypeDependent() || Arg->containsErrors())
      continue;
    const clang::Expr *E = Arg->IgnoreParenImpCasts();
    const clang::QualType T = E->getType();
    if (!T->isFunctionPointerType() && !T->isMemberFunctionPointerType() &&
        !T->isFunctionType())
      continue;
    if (!namesFunction(*E))
      return Arg;
  }
  return nullptr;
}

/// The destructors a destructor of \p Class runs after its body, which
/// its body does not show: those of its bases and of its members (arrays
/// included) that are not trivial.
inline std::vector<const clang::CXXDestructorDecl *>
partDestructors(const clang::CXXRecordDecl &Class) {
  std::vector<const clang::CXXDestructorDecl *> Out;
  auto Add = [&](clang::QualType T) {
    const clang::CXXRecordDecl *R =
        T->getBaseElementTypeUnsafe()->getAsCXXRecordDecl();
    if (!R || !R->hasDefinition())
      return;
    if (const clang::CXXDestructorDecl *D = R->getDestructor();
        D && !D->isTrivial())
      Out.push_back(D);
  };
  if (!Class.hasDefinition())
    return Out;
  for (const clang::CXXBaseSpecifier &B : Class.bases())
    Add(B.getType());
  for (const clang::CXXBaseSpecifier &B : Class.vbases())
    Add(B.getType());
  for (const clang::FieldDecl *F : Class.fields())
    Add(F->getType());
  return Out;
}

/// Matches a function nvcc compiles for the device (runsOnDevice).
AST_MATCHER(clang::FunctionDecl, runsOnDevice) {
  return smpart::runsOnDevice(Node);
}

/// The kernel a launch names (`k`, `ns::k<T>`, `*k`, an overload set),
/// also when the call is dependent; null for a launch through a pointer.
inline const clang::FunctionDecl *
launchedKernel(const clang::CUDAKernelCallExpr &Call) {
  if (const clang::FunctionDecl *FD = Call.getDirectCallee())
    return FD;
  const clang::Expr *Callee = Call.getCallee()->IgnoreParenImpCasts();
  if (const auto *ULE = llvm::dyn_cast<clang::UnresolvedLookupExpr>(Callee))
    for (const clang::NamedDecl *D : ULE->decls()) {
      const clang::NamedDecl *Under = D->getUnderlyingDecl();
      if (const auto *FTD = llvm::dyn_cast<clang::FunctionTemplateDecl>(Under))
        return FTD->getTemplatedDecl();
      if (const auto *FD = llvm::dyn_cast<clang::FunctionDecl>(Under))
        return FD;
    }
  return nullptr;
}

/// Host-side `<<<>>>` launches, bound to "launch", with the function they
/// are in bound to "fn" (device-side launches are refusals, KernelHazards);
/// in template patterns only: instantiations share the pattern's text.
inline clang::ast_matchers::StatementMatcher hostLaunch() {
  using namespace clang::ast_matchers;
  return cudaKernelCallExpr(
             forFunction(functionDecl(unless(anyOf(runsOnDevice(),
                                                   isTemplateInstantiation())))
                             .bind("fn")))
      .bind("launch");
}

} // namespace smpart

#endif // SMPART_ANALYSIS_DEVICECODE_H
