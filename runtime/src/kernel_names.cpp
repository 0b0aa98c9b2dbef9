#include "kernel_names.hpp"

#include "cuda_scopes.hpp"

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
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
  int status = -1;
  char *demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : symbol;
  std::free(demangled);
  if (status != 0)
    return name; // extern "C", or not a C++ symbol: the name as it is
  // `void ns::k<int, 4>(float*, int)`: a kernel returns void, and only a
  // template instance's mangled name carries its return type.
  name = dropTrailing(name, '(', ')');
  if (name.rfind("void ", 0) == 0)
    name.erase(0, 5);
  return dropTrailing(name, '<', '>');
}

bool kernelNameOf(const void *fn, std::string &out) {
  static std::mutex mu;
  static auto *known = new std::unordered_map<const void *, std::string>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known->find(fn);
  if (it == known->end()) {
    // Not a stream operation, but a launch under a global-mode capture
    // must not be the call that breaks it.
    CaptureModeRelaxed relaxed;
    const cudaError_t before = cudaPeekAtLastError();
    const char *symbol = nullptr;
    if (cudaFuncGetName(&symbol, fn) != cudaSuccess || !symbol) {
      if (before == cudaSuccess)
        (void)cudaGetLastError(); // the lookup's error, not the caller's
      return false;
    }
    it = known->emplace(fn, qualifiedKernelName(symbol)).first;
  }
  out = it->second;
  return true;
}

} // namespace detail
} // namespace smpart
