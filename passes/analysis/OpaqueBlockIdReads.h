// What a device function that this run does not rewrite does with the block
// index: one in a system header, or in a header outside --header-filter. A
// kernel that calls it becomes persistent, so its CTA runs many logical
// blocks; a read of the physical blockIdx/gridDim (or %ctaid) there would
// see the CTA, not the logical block, and the kernel must be refused, while
// a read of smpart::blockIdx() (a header an earlier run rewrote) only needs
// the kernel to publish its logical block. Found by walking the function's
// body and every body it calls.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

#include <map>
#include <set>
#include <string>

namespace smpart {

class OpaqueBlockIdReads {
public:
  enum class Kind {
    None,       ///< neither
    Logical,    ///< smpart::blockIdx()/gridDim() only
    Physical,   ///< blockIdx/gridDim or %ctaid/%nctaid
    Dispatched, ///< calls through a pointer or a virtual function: unknown
  };
  struct Read {
    Kind What = Kind::None;
    /// Physical, Dispatched: the function that reads it (makes the call)
    /// and where.
    const clang::FunctionDecl *Reader = nullptr;
    clang::SourceLocation Where;
  };

  /// What \p Fn (its definition, with what it calls) reads. Calls into the
  /// runtime's own `smpart::` code are not followed, nor into cooperative
  /// groups, whose calls that depend on the physical grid are named
  /// (KernelHazards::gridDependentCall).
  Read of(const clang::FunctionDecl *Fn);

  /// True for smpart::blockIdx() and smpart::gridDim().
  static bool isLogicalBlockQuery(const clang::FunctionDecl &Fn);
  /// What expression \p E (a default argument of function \p In) reads.
  Read ofExpr(const clang::Expr *E, const clang::FunctionDecl &In);
  /// True for a function of the runtime's `smpart` namespace.
  static bool isRuntimeFunction(const clang::FunctionDecl &Fn);

private:
  std::map<const clang::FunctionDecl *, Read> Memo;
  /// The functions being walked, and whether a walk since the innermost
  /// one began met one of them (its result then depends on theirs).
  std::set<const clang::FunctionDecl *> Walking;
  bool Cyclic = false;
};

} // namespace smpart
