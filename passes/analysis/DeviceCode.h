#ifndef SMPART_ANALYSIS_DEVICECODE_H
#define SMPART_ANALYSIS_DEVICECODE_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace smpart {

/// True if nvcc compiles `Fn` for the device: a kernel, or a function
/// declared __device__. Clang makes a lambda without __host__/__device__
/// implicitly both; nvcc compiles it for the side of the function it is
/// written in (host at namespace scope), so a launch inside a lambda in a
/// host function is a host launch.
inline bool runsOnDevice(const clang::FunctionDecl &Fn) {
  if (Fn.hasAttr<clang::CUDAGlobalAttr>())
    return true;
  const auto *Device = Fn.getAttr<clang::CUDADeviceAttr>();
  if (!Device)
    return false;
  const auto *Method = llvm::dyn_cast<clang::CXXMethodDecl>(&Fn);
  if (!Device->isImplicit() || !Method || !Method->getParent()->isLambda())
    return true;
  for (const clang::DeclContext *DC = Method->getParent()->getDeclContext(); DC;
       DC = DC->getParent())
    if (const auto *Outer = llvm::dyn_cast<clang::FunctionDecl>(DC))
      return runsOnDevice(*Outer);
  return false;
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
           !llvm::isa<clang::CXXPseudoDestructorExpr>(E->IgnoreParenImpCasts());
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

/// True where a call of \p In is checked for dispatch at run time: in the
/// device-side parse (the host side also sees the host-only branches of
/// __host__ __device__ code), outside template instantiations (a call
/// through a template argument, a lambda or a function, is known where
/// it is instantiated; the template's other calls are checked in the
/// template itself).
inline bool checkedForDispatch(const clang::FunctionDecl &In) {
  return In.getASTContext().getLangOpts().CUDAIsDevice &&
         !In.isTemplateInstantiation() &&
         !llvm::isa<clang::ClassTemplateSpecializationDecl>(
             In.getDeclContext());
}

/// Matches a function nvcc compiles for the device (runsOnDevice).
AST_MATCHER(clang::FunctionDecl, runsOnDevice) {
  return smpart::runsOnDevice(Node);
}

} // namespace smpart

#endif // SMPART_ANALYSIS_DEVICECODE_H
