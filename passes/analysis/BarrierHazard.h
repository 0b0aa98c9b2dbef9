// Finds a CTA-wide barrier that threads may reach after other threads of the
// same CTA took an early `return`. In the original kernel those threads have
// exited and the barrier no longer waits for them; in the persistent form
// they wait at the loop's own barrier instead, so the two barriers would pair
// up wrongly. Such kernels are refused.
#pragma once

#include "analysis/DispatchTargets.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <optional>

namespace smpart {

/// What a call synchronises with, when it does.
enum class Collective { None, Block, Warp };

struct BarrierAfterReturn {
  const clang::ReturnStmt *Return;
  /// The collective (a call or an inline asm), or the call of a function
  /// that (transitively) runs one or cannot be seen into: a call through a
  /// pointer or a virtual call counts as a possible barrier.
  const clang::Stmt *Barrier;
  Collective Kind = Collective::Block;
  /// The function called by Barrier when the collective is inside it.
  const clang::FunctionDecl *Via = nullptr;
};

/// True for __syncthreads() and its variants, and thread_block::sync().
bool isBlockBarrier(const clang::CallExpr &Call);

/// True for warp collectives: __syncwarp, __shfl*_sync, __ballot_sync,
/// __all/__any/__match*/__reduce*_sync, and the collectives of
/// cooperative-groups tiles (tiled_partition(...).sync(), .shfl(), ...).
bool isWarpCollective(const clang::CallExpr &Call);

/// What inline asm text synchronises: Block for `bar.sync`/`barrier.sync`
/// (also `.cta`, `.red`), Warp for `bar.warp.sync` and the `.sync` forms of
/// shfl/vote/match/redux.
Collective asmCollective(llvm::StringRef AsmString);

/// What the call does, following calls into functions with a body
/// (transitively): Block or Warp if it may run such a collective. A call of
/// a user function the translation unit has no body for may, by default;
/// bodiless functions of system headers (libdevice, builtins) do not. A
/// call chosen at run time may, unless \p Targets lists what it reaches.
Collective collectiveOf(const clang::CallExpr &Call,
                        const clang::ASTContext &Ctx,
                        DispatchTargets *Targets = nullptr);

/// The first (return, collective) pair such that some branch can send one
/// thread to the return and another on to a block barrier or, failing
/// that, a warp collective (a lane that "returned" waits at the loop's
/// barrier instead of having exited, so a full-mask warp collective would
/// wait for it forever). A branch counts only
/// if its condition may differ between threads (it reads threadIdx, memory,
/// a call, or a local derived from them); loops over uniform bounds do not.
std::optional<BarrierAfterReturn>
findBarrierAfterReturn(const clang::FunctionDecl &Kernel,
                       clang::ASTContext &Ctx,
                       DispatchTargets *Targets = nullptr);

} // namespace smpart
