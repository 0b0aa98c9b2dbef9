// Finds a CTA-wide barrier that threads may reach after other threads of the
// same CTA took an early `return`. In the original kernel those threads have
// exited and the barrier no longer waits for them; in the persistent form
// they wait at the loop's own barrier instead, so the two barriers would pair
// up wrongly. Such kernels are refused.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <optional>

namespace smpart {

struct BarrierAfterReturn {
  const clang::ReturnStmt *Return;
  const clang::CallExpr *Barrier;
};

/// True for __syncthreads() and its variants, and thread_block::sync().
bool isBlockBarrier(const clang::CallExpr &Call);

/// The first (return, barrier) pair such that some branch can send one
/// thread to the return and another on to the barrier. A branch counts only
/// if its condition may differ between threads (it reads threadIdx, memory,
/// a call, or a local derived from them); loops over uniform bounds do not.
std::optional<BarrierAfterReturn>
findBarrierAfterReturn(const clang::FunctionDecl &Kernel,
                       clang::ASTContext &Ctx);

} // namespace smpart
