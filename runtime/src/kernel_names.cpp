#include "kernel_names.hpp"

#include "cuda_scopes.hpp"

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace smpart {
namespace detail {

namespace {

/// `text` without the bracketed list it ends with (`open`...`close`,
/// nested), or unchanged when it does not end with one. For template
/// arguments, brackets inside parentheses do not count: `k<(1 > 2)>`.
std::string dropTrailing(const std::string &text, char open, char close) {
  if (text.empty() || text.back() != close)
    return text;
  const bool skip_parens = open != '(';
  int depth = 0, parens = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    const char c = text[i];
    if (skip_parens && (c == ')' || c == '(')) {
      parens += c == ')' ? 1 : -1;
      continue;
    }
    if (parens > 0)
      continue;
    if (c == close)
      ++depth;
    else if (c == open && --depth == 0)
      return text.substr(0, i);
  }
  return text;
}

} // namespace

std::string qualifiedKernelName(const char *symbol) {
  if (!symbol)
    return "";
  // With separate compilation nvcc prefixes the symbol of a kernel of
  // internal linkage (`__nv_static_<id>__Z...`).
  if (std::strncmp(symbol, "__nv_static_", 12) == 0)
    if (const char *z = std::strstr(symbol + 12, "_Z"))
      symbol = z;
  // Only a mangled name is demangled: given `f` (an extern "C" kernel),
  // the demangler would answer `float`, the type that letter encodes.
  if (std::strncmp(symbol, "_Z", 2) != 0)
    return symbol;
  int status = -1;
  char *demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : symbol;
  std::free(demangled);
  if (status != 0)
    return name;
  // `void ns::k<int, 4>(float*, int)`: a kernel returns void, and only a
  // template instance's mangled name carries its return type.
  name = dropTrailing(name, '(', ')');
  if (name.rfind("void ", 0) == 0)
    name.erase(0, 5);
  return dropTrailing(name, '<', '>');
}

namespace {

PointedKernel askCuda(const void *fn) {
  PointedKernel k;
  // Not stream operations, but a launch under a global-mode capture must
  // not be the call that breaks it.
  CaptureModeRelaxed relaxed;
  const cudaError_t before = cudaPeekAtLastError();
#if CUDART_VERSION >= 12030
  const char *symbol = nullptr;
  k.known = cudaFuncGetName(&symbol, fn) == cudaSuccess && symbol;
  if (k.known)
    k.name = qualifiedKernelName(symbol);
#endif // older toolkits: no name, the launch runs unconfined
  cudaFuncAttributes attr{};
  if (k.known && cudaFuncGetAttributes(&attr, fn) == cudaSuccess)
    k.clustered = attr.clusterDimMustBeSet || attr.requiredClusterWidth > 0;
  if (before == cudaSuccess)
    (void)cudaGetLastError(); // the lookup's error, not the caller's
  return k;
}

} // namespace

const PointedKernel &pointedKernel(const void *fn) {
  // Never destroyed: launches may run during static destruction. Entries
  // are never erased, so a reference stays valid.
  static std::shared_mutex mu;
  static auto *known =
      new std::unordered_map<const void *, std::unique_ptr<PointedKernel>>;
  {
    std::shared_lock<std::shared_mutex> lock(mu);
    if (auto it = known->find(fn); it != known->end())
      return *it->second;
  }
  auto k = std::make_unique<PointedKernel>(askCuda(fn));
  std::unique_lock<std::shared_mutex> lock(mu);
  return *known->emplace(fn, std::move(k)).first->second;
}

} // namespace detail
} // namespace smpart
