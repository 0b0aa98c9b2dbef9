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

/// `name` without the parameter list it ends with (`k(float*, int)`,
/// nested parentheses: `k(void (*)(int))`), or unchanged.
std::string withoutParameters(const std::string &name) {
  if (name.empty() || name.back() != ')')
    return name;
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;)
    if (name[i] == ')')
      ++depth;
    else if (name[i] == '(' && --depth == 0)
      return name.substr(0, i);
  return name;
}

/// `name` without any template argument list (`Ops<float>::k<4>` ->
/// `Ops::k`), as smpart-transform names a template's kernels. Inside an
/// argument list, brackets in parentheses do not count: `k<(1 > 2)>`.
std::string withoutTemplateArgs(const std::string &name) {
  std::string out;
  int depth = 0, parens = 0;
  for (const char c : name) {
    if (depth == 0) {
      if (c == '<')
        depth = 1;
      else
        out += c;
      continue;
    }
    if (c == '(' || c == ')')
      parens += c == '(' ? 1 : -1;
    else if (parens == 0 && c == '<')
      ++depth;
    else if (parens == 0 && c == '>')
      --depth;
  }
  return out;
}

} // namespace

std::string qualifiedKernelName(const char *symbol) {
  if (!symbol)
    return "";
  // Only a mangled name is demangled: given `f` (an extern "C" kernel),
  // the demangler would answer `float`, the type that letter encodes.
  // With separate compilation nvcc prefixes the symbol of a kernel of
  // internal linkage (`__nv_static_<id>_<file>__Z...`, where the file name
  // may hold a `_Z` too): the first `_Z` from which the rest demangles.
  const bool prefixed = std::strncmp(symbol, "__nv_static_", 12) == 0;
  std::string name;
  for (const char *z = prefixed ? std::strstr(symbol + 12, "_Z") : symbol;
       z && std::strncmp(z, "_Z", 2) == 0 && name.empty();
       z = prefixed ? std::strstr(z + 2, "_Z") : nullptr) {
    int status = -1;
    char *demangled = abi::__cxa_demangle(z, nullptr, nullptr, &status);
    if (status == 0 && demangled)
      name = demangled;
    std::free(demangled);
  }
  if (name.empty())
    return symbol;
  // `void ns::k<int, 4>(float*, int)`: a kernel returns void, and only a
  // template instance's mangled name carries its return type.
  name = withoutParameters(name);
  if (name.rfind("void ", 0) == 0)
    name.erase(0, 5);
  return withoutTemplateArgs(name);
}

namespace {

PointedKernel askCuda(const void *fn) {
  PointedKernel k;
  // Not stream operations, but a launch under a global-mode capture must
  // not be the call that breaks it.
  CaptureModeRelaxed relaxed;
  KeepLastError keep; // the lookup's errors are not the caller's
#if CUDART_VERSION >= 12030
  const char *symbol = nullptr;
  k.known = cudaFuncGetName(&symbol, fn) == cudaSuccess && symbol;
  if (k.known)
    k.name = qualifiedKernelName(symbol);
#endif // older toolkits: no name, the launch runs unconfined
  cudaFuncAttributes attr{};
  if (k.known && cudaFuncGetAttributes(&attr, fn) == cudaSuccess)
    k.clustered = attr.clusterDimMustBeSet || attr.requiredClusterWidth > 0;
  return k;
}

} // namespace

const PointedKernel &pointedKernel(const void *fn) {
  // Never destroyed: launches may run during static destruction. Entries
  // are never erased, so a reference stays valid.
  static auto *mu = new std::shared_mutex;
  static auto *known =
      new std::unordered_map<const void *, std::unique_ptr<PointedKernel>>;
  {
    std::shared_lock<std::shared_mutex> lock(*mu);
    if (auto it = known->find(fn); it != known->end())
      return *it->second;
  }
  auto k = std::make_unique<PointedKernel>(askCuda(fn));
  std::unique_lock<std::shared_mutex> lock(*mu);
  return *known->emplace(fn, std::move(k)).first->second;
}

} // namespace detail
} // namespace smpart
