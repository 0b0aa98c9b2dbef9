// smpart::Status and smpart::Error: how libsmpart reports failures. Plain
// C++ (no CUDA), so that the CPU emulation and unit tests share it. Include
// smpart/runtime.hpp rather than this header.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace smpart {

enum class Errc {
  kOk = 0,
  kCuda,            ///< a CUDA runtime call failed (see cudaError())
  kNoDevice,        ///< no usable GPU or driver; the first call says which
  kInvalidArgument, ///< a knob value out of range, an empty handle
  kNotSupported,    ///< a knob on an opaque (untransformed) kernel
  kPreempted,       ///< wait() on a kernel preempted and not resumed
  kDeviceReset,     ///< the device was reset (cudaDeviceReset) under the kernel
};

/// The outcome of a libsmpart call. A failed CUDA call carries the API
/// expression, CUDA's error name and string, and the file:line that made it.
class Status {
public:
  Status() = default;
  Status(Errc code, std::string message, int cuda_error = 0)
      : code_(code), cuda_error_(cuda_error), message_(std::move(message)) {}

  bool ok() const { return code_ == Errc::kOk; }
  explicit operator bool() const { return ok(); }
  Errc code() const { return code_; }
  /// The cudaError_t value when code() is kCuda or kNoDevice, else 0.
  int cudaError() const { return cuda_error_; }
  const std::string &message() const { return message_; }

  /// For callers that prefer exceptions: throws smpart::Error if failed.
  inline void throwIfError() const;

private:
  Errc code_ = Errc::kOk;
  int cuda_error_ = 0;
  std::string message_;
};

/// Thrown only by Status::throwIfError(); libsmpart itself never throws.
class Error : public std::runtime_error {
public:
  explicit Error(Status status)
      : std::runtime_error(status.message()), status_(std::move(status)) {}
  const Status &status() const { return status_; }

private:
  Status status_;
};

inline void Status::throwIfError() const {
  if (!ok())
    throw Error(*this);
}

} // namespace smpart
