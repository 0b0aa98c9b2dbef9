// The name of a kernel known only by its address: what a <<<>>> launch
// through a pointer (a table, a variable) names its partition after.
#pragma once

#include <string>

namespace smpart {
namespace detail {

/// The qualified name of the kernel whose symbol is `symbol` (mangled, or
/// plain for extern "C"), without its parameters, template arguments or
/// return type: `_ZN3ops6scaledILi4EEEvPf` -> `ops::scaled`. That is the
/// name smpart-transform writes for a direct launch of the same kernel, so
/// both kinds of launch share its partition.
std::string qualifiedKernelName(const char *symbol);

/// The qualified name of the kernel at `fn` (cudaFuncGetName), looked up
/// once per address. False, and `out` unchanged, when CUDA does not know
/// it as a kernel.
bool kernelNameOf(const void *fn, std::string &out);

} // namespace detail
} // namespace smpart
