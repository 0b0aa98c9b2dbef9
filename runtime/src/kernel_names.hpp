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

/// What a launch through a pointer needs to know of the kernel at `fn`.
struct PointedKernel {
  bool known = false; ///< CUDA names it (cudaFuncGetName)
  std::string name;   ///< qualifiedKernelName of its symbol
  /// Its CTAs form clusters (a required cluster size): the hardware
  /// co-schedules them, which a partition smaller than the GPU may not
  /// allow, so its launches run on every SM, as the tool leaves a
  /// direct launch of it.
  bool clustered = false;
};

/// The kernel at `fn`, asked of CUDA once per address (also when CUDA does
/// not know it: `known` is false then). Leaves no error behind.
const PointedKernel &pointedKernel(const void *fn);

} // namespace detail
} // namespace smpart
