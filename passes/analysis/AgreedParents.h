// What all the parents of an AST node say about it. Instantiating a
// template reuses the pattern's non-dependent expressions (a <<<>>>
// launch's callee, a kernel's name passed to a query), so one node may have
// a parent in the pattern and one in each instantiation: how the node is
// used has an answer only when all of them give the same one.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"

#include <optional>

namespace smpart {

/// \p Classify applied to every parent of \p Child (the parent as a
/// statement; null for one that is not): the answer all of them give, or
/// \p Disagree when two answers differ or \p Child has no parent.
template <typename T, typename ClassifyFn>
T agreedOverParents(const clang::Stmt &Child, clang::ASTContext &AST,
                    T Disagree, ClassifyFn Classify) {
  std::optional<T> Agreed;
  for (const clang::DynTypedNode &Parent : AST.getParents(Child)) {
    T Answer = Classify(Parent.get<clang::Stmt>());
    if (Agreed && *Agreed != Answer)
      return Disagree;
    Agreed = Answer;
  }
  return Agreed ? *Agreed : Disagree;
}

} // namespace smpart
