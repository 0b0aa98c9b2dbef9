// Decides whether a pointer expression inside a kernel provably points to
// global memory: a kernel pointer parameter, or a local pointer whose every
// value is derived from one by arithmetic, casts or `&p[i]`. Anything else
// (__shared__ arrays, locals whose address escapes, struct members,
// function results) is unknown, and its loads are left alone.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace smpart {

class GlobalPointerProvenance {
public:
  /// Scans the kernel body once for every value stored in pointer variables.
  explicit GlobalPointerProvenance(const clang::FunctionDecl &Kernel);

  bool isGlobal(const clang::Expr *Pointer) const;

private:
  bool isGlobal(const clang::Expr *E,
                llvm::DenseSet<const clang::VarDecl *> &InProgress) const;
  bool isGlobalVar(const clang::VarDecl *V,
                   llvm::DenseSet<const clang::VarDecl *> &InProgress) const;

  const clang::FunctionDecl &Kernel;
  /// Every expression assigned to a pointer variable in the body.
  llvm::DenseMap<const clang::VarDecl *,
                 llvm::SmallVector<const clang::Expr *, 2>>
      Stores;
  /// Pointer variables whose address is taken: they may change unseen.
  llvm::DenseSet<const clang::VarDecl *> Escaped;
};

} // namespace smpart
