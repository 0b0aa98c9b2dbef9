// Where the pieces of a `kernel<<<grid, block, smem, stream>>>(args)` launch
// are spelled, after macro resolution. Kept apart from LaunchRewrite so the
// parsing of launch expressions can be tested on its own.
#pragma once

#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"

#include <optional>
#include <string>

namespace smpart {

struct LaunchSyntax {
  clang::SourceLocation CalleeBegin; ///< first character of the callee
  clang::SourceLocation ConfigOpen;  ///< the `<<<`
  clang::SourceLocation ConfigClose; ///< the `>>>`
  clang::SourceLocation ArgsOpen;    ///< the `(` after `>>>`
  clang::SourceLocation ArgsClose;   ///< the final `)`
  unsigned WrittenConfigArgs = 0;    ///< 2, 3 or 4
  std::string CalleeText;            ///< e.g. `ns::kernel<float>`
  std::string MacroName;             ///< set when spelled in a macro body
};

/// Resolves every piece to its spelling in one file. Fails (nullopt) when
/// the pieces are spelled in different files or macros.
std::optional<LaunchSyntax> parseLaunch(const clang::CUDAKernelCallExpr &Call,
                                        const clang::SourceManager &SM,
                                        const clang::LangOptions &LO);

} // namespace smpart
