// The edit that wraps an expression naming a kernel (its name, `&name`,
// `ns::name<T>`) in a call that picks one overload of the kernel:
// `smpart::rewritten(k)` for a query, `smpart::original(k, k)` for a use
// that launches the original. Shared by KernelQueryRewrite and
// KernelAddressRewrite.
#pragma once

#include "pipeline/RewriteContext.h"

#include "clang/AST/Expr.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace smpart {

/// Replaces \p Operand's text T with Wrap(T): where it is written, also in
/// a macro argument (`checkCudaErrors(f(k))`); a name written in a macro's
/// body is edited there, once, when that file may be rewritten. Nullopt
/// when the text cannot be edited.
std::optional<Edit>
wrapKernelName(const clang::Expr &Operand, const clang::SourceManager &SM,
               const clang::LangOptions &LO, const RewriteContext &Ctx,
               llvm::function_ref<std::string(llvm::StringRef)> Wrap);

} // namespace smpart
