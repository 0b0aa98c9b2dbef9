// SMPART_CUDA_CHECK's failure path: a failing CUDA call as a smpart::Status.
#include "smpart/detail/cuda_check.hpp"

#include <cstring>
#include <string>

namespace smpart {
namespace detail {

Status cudaFailure(cudaError_t err, const char *api, const char *file,
                   int line) {
  const char *base = std::strrchr(file, '/');
  std::string msg = std::string(api) + " failed: " + cudaGetErrorName(err) +
                    ": " + cudaGetErrorString(err) + " (at " +
                    (base ? base + 1 : file) + ":" + std::to_string(line) + ")";
  const bool no_device = err == cudaErrorInsufficientDriver ||
                         err == cudaErrorNoDevice ||
                         err == cudaErrorDevicesUnavailable;
  if (no_device)
    msg = "no usable CUDA GPU: " + msg;
  return Status(no_device ? Errc::kNoDevice : Errc::kCuda, std::move(msg),
                static_cast<int>(err));
}

} // namespace detail
} // namespace smpart
