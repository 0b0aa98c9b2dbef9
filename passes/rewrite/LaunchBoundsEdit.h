// The edit that keeps a kernel's `__launch_bounds__(T, M)` register cap
// without the padding ptxas adds under it.
//
// ptxas reads a minimum of M resident blocks (.minnctapersm) as a register
// budget to fill, not only as a cap: the persistent form of a light kernel
// then takes every register the cap allows (clamp_copy<512> under
// `__launch_bounds__(512, 2)`: 63 registers, 2 resident CTAs, where the
// original has 12 and 4). A bound of M x T threads per block (.maxntid)
// caps registers exactly as M blocks of T threads do, and ptxas does not
// fill it (32 registers, 4 CTAs). The rewritten kernel says that instead
// wherever M x T fits in a block (1024 threads); the runtime then refuses
// a launch of more than T threads per block, as CUDA refuses it for the
// original (KernelInfo::max_threads_per_block).
#pragma once

#include "pipeline/Facts.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

#include <optional>

namespace smpart {

/// The edit of \p D's own `__launch_bounds__(T, M)` arguments: `M x T'`
/// (T' is T rounded up to a warp) when it is at most 1024, the same
/// choice as a conditional expression when T or M depends on template
/// parameters; nullopt when there is nothing to gain (no M, a third
/// argument, M x T' over 1024) or the arguments are not written in the
/// file (spelled in a macro's body).
std::optional<Edit> launchBoundsEdit(const clang::FunctionDecl &D,
                                     const clang::ASTContext &AST);

/// T, for a launch of \p Kernel (an instance, not a dependent pattern)
/// whose rewritten bound launchBoundsEdit() made wider than T; nullopt
/// otherwise.
std::optional<unsigned> widenedMaxThreads(const clang::FunctionDecl &Kernel,
                                          const clang::ASTContext &AST);

} // namespace smpart
