// The one macro that checks CUDA runtime calls inside libsmpart (after
// CCCL's _CCCL_TRY_CUDA_API): a failing call becomes a smpart::Status that
// names the API, carries CUDA's error string and the call site. Nothing here
// aborts or throws; callers return the status.
#pragma once

#include "smpart/detail/status.hpp"

#include <cuda_runtime.h>

namespace smpart {
namespace detail {

Status cudaFailure(cudaError_t err, const char *api, const char *file,
                   int line);

} // namespace detail
} // namespace smpart

/// Evaluates `expr` (a CUDA runtime call); on failure returns from the
/// enclosing function a smpart::Status naming the call. Use in functions
/// returning smpart::Status.
#define SMPART_CUDA_CHECK(expr)                                                \
  do {                                                                         \
    const cudaError_t smpart_err_ = (expr);                                    \
    if (smpart_err_ != cudaSuccess)                                            \
      return ::smpart::detail::cudaFailure(smpart_err_, #expr, __FILE__,       \
                                           __LINE__);                          \
  } while (0)

/// Like SMPART_CUDA_CHECK but for a Status-returning smpart call.
#define SMPART_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::smpart::Status smpart_st_ = (expr);                                      \
    if (!smpart_st_.ok())                                                      \
      return smpart_st_;                                                       \
  } while (0)
