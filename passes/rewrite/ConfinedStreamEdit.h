// The edit that puts a `<<<>>>` launch, unchanged otherwise, on the SMs of
// a partition: its stream argument becomes `smpart::confined(K, stream)`
// (smpart/confined.hpp), a temporary that forks the launch into the
// partition's lane for `stream` and joins it back when the full expression
// ends. K names the partition: a kernel's name as a string literal, or, for
// a launch through a pointer, the pointer itself.
#pragma once

#include "pipeline/Facts.h"
#include "rewrite/LaunchSyntax.h"

#include <optional>
#include <set>
#include <string>

namespace smpart {

/// The partition a kernel's launches run on, named as CUDA names the kernel
/// (what `smpart::confined` of a pointer to it finds at run time): an
/// extern "C" kernel by its symbol, any other by its qualified name with
/// inline namespaces and without template arguments (`ns::v1::k`).
std::string partitionName(const clang::FunctionDecl &Kernel);

/// The edit, or none when the stream is `smpart::confined(...)` already
/// (a header an earlier run rewrote); nullopt when the stream argument is
/// not spelled in the file.
std::optional<std::set<Edit>>
confinedStreamEdits(const clang::CUDAKernelCallExpr &Call,
                    const LaunchSyntax &S, llvm::StringRef Partition,
                    const clang::SourceManager &SM,
                    const clang::LangOptions &LO);

} // namespace smpart
