// The functions a call chosen at run time may reach, where a translation
// unit's device code is one whole program. Without separate compilation
// (-rdc / -fgpu-rdc) nvcc links no other device code into the module, so a
// device function pointer the module calls can only hold the address of a
// device function this translation unit names somewhere other than as a
// callee (also through an object, for a static member, or under a cast to
// another type), or of a lambda it converts to a pointer, and a virtual
// call can only run an override this translation unit defines, a virtual
// destructor that of a class it defines (objects with virtual functions
// must be made in device code, and no other device code makes them). The
// analyses follow these targets as if called, instead of refusing the
// call.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"

#include <optional>
#include <vector>

namespace smpart {

class DispatchTargets {
public:
  /// Every function \p Call (dispatchesAtRunTime) may reach, or nothing
  /// where they cannot be listed: separate compilation, a pointer to
  /// member, or no candidate at all (a pointer from somewhere this parse
  /// does not show).
  std::optional<std::vector<const clang::FunctionDecl *>>
  of(const clang::CallExpr &Call, const clang::ASTContext &AST);

  /// The same for a function pointer of type \p Pointer handed to a
  /// template that may call through it (passedFunctionPointer).
  std::optional<std::vector<const clang::FunctionDecl *>>
  ofPointer(clang::QualType Pointer, const clang::ASTContext &AST);

  /// The classes whose destructor a virtual destructor of \p Static may
  /// run (\p Static and every class of the file derived from it), or
  /// nothing under separate compilation.
  std::optional<std::vector<const clang::CXXRecordDecl *>>
  destroyedAs(const clang::CXXRecordDecl &Static, const clang::ASTContext &AST);

  /// Forgets the candidates: a new translation unit begins (its context
  /// may reuse the address of the last one).
  void reset() { Seen = nullptr; }

private:
  /// Collects the candidates of \p AST once.
  void collect(const clang::ASTContext &AST);

  const clang::ASTContext *Seen = nullptr;
  /// Device functions named other than as the callee of a call.
  std::vector<const clang::FunctionDecl *> AddressTaken;
  /// Call operators of lambdas converted to a function pointer.
  std::vector<const clang::FunctionDecl *> LambdaInvokers;
  /// Device functions cast to another type: any pointer may reach them.
  std::vector<const clang::FunctionDecl *> Retyped;
  /// Classes defined in the file.
  std::vector<const clang::CXXRecordDecl *> Classes;
  /// Virtual device member functions with a body.
  std::vector<const clang::CXXMethodDecl *> Virtuals;
};

} // namespace smpart
