// The edit that keeps a kernel's `__launch_bounds__(T, M)` register cap
// without the padding ptxas adds under it.
//
// ptxas reads a minimum of M resident blocks (.minnctapersm) as a register
// budget to fill, not only as a cap: the persistent form of a light kernel
// then takes every register the cap allows (clamp_copy<512> under
// `__launch_bounds__(512, 2)`: 63 registers, 2 resident CTAs, where the
// original has 12 and 4). A bound of M x T threads per block (.maxntid)
// caps registers exactly as M blocks of T threads do (on every GPU whose
// block may use the whole register file, sm_50 on but sm_53 and sm_62),
// and ptxas does not fill it (32 registers, 4 CTAs). The rewritten kernel
// says that instead wherever M x T fits in a block (1024 threads). Not for
// a kernel whose largest block the file queries (cudaFuncGetAttributes,
// cudaOccupancyMaxPotentialBlockSize ask the rewritten kernel, and would
// answer M x T), nor for one defined in a header (other files may): the
// planner decides (FunctionFacts::LaunchBoundsEdits).
//
// Launches carry T where it is a number both parses agree on (a literal,
// or a template parameter), KernelInfo::max_threads_per_block: the runtime
// refuses a larger block as CUDA refuses it for the original. Elsewhere (T
// from a macro or a constant that may depend on __CUDA_ARCH__, a launch in
// a macro's body or a template) a block of up to M x T threads runs.
#pragma once

#include "pipeline/Facts.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

#include <optional>
#include <set>

namespace smpart {

/// The edits of the `__launch_bounds__(T, M)` arguments of every
/// declaration of \p Kernel in its file, all or none: `M x T'` (T' is T
/// rounded up to a warp) when both are written as decimal literals and
/// that is at most 1024, else the same choice as a conditional expression
/// of their text, which nvcc evaluates for each instance and architecture
/// (arguments that expand macros are taken as written in the
/// `__launch_bounds__(...)`). None when there is nothing to gain (no M, a
/// third argument, literals over 1024) or a declaration's bound is not
/// written in the file (it comes from a macro's body).
std::set<Edit> launchBoundsEdits(const clang::FunctionDecl &Kernel,
                                 const clang::ASTContext &AST);

/// T, for a launch of \p Kernel (an instance, not a dependent pattern),
/// when its bound is `(T, M)` with T a decimal literal written in the
/// file or a template parameter:
/// the largest block of the original, which the rewritten kernel's bound
/// may exceed.
std::optional<unsigned> originalMaxThreads(const clang::FunctionDecl &Kernel,
                                           const clang::ASTContext &AST);

} // namespace smpart
