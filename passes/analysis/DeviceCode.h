#ifndef SMPART_ANALYSIS_DEVICECODE_H
#define SMPART_ANALYSIS_DEVICECODE_H

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
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

/// Matches a function nvcc compiles for the device (runsOnDevice).
AST_MATCHER(clang::FunctionDecl, runsOnDevice) {
  return smpart::runsOnDevice(Node);
}

} // namespace smpart

#endif // SMPART_ANALYSIS_DEVICECODE_H
