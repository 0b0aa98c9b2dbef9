// smpart_nvcc_compat.h: pre-included by smpart-transform in both parses
// (never in the rewritten output) so that clang-22 accepts what nvcc
// accepts. Each block names the nvcc dialect feature it stands in for and
// has a lit test under lit_tests/dialect/. Disable with --nvcc-compat=none.
#ifndef SMPART_NVCC_COMPAT_H
#define SMPART_NVCC_COMPAT_H

// Only with the real toolkit headers (not with -nocudainc stubs).
#if defined(__CUDA__) && defined(CUDA_VERSION)

// Not closed: nvcc defines CUDA_VERSION only once the program includes
// cuda.h, clang's wrapper always; CCCL and the wrapper itself need it under
// clang, so `#ifdef CUDA_VERSION` without cuda.h differs (docs/nvcc-dialect.md).

// nvcc's headers (crt/common_functions.h, math_functions.h, cuda_runtime.h)
// include these for every translation unit; host code calls time(),
// clock(), printf(), assert() without including them.
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cstdarg>
#include <functional>
#include <new>
#include <utility>

// crt/math_functions.hpp: __host__ __device__ max/min for mixed signed,
// unsigned and floating arguments. clang's wrapper has them on the device
// side only; host code such as `max(unsigned, int)` needs them too (in
// both parses: host functions are checked in the device-side parse too).
#define SMPART_MINMAX(R, A, B)                                                 \
  static inline __host__ R max(const A a, const B b) {                        \
    return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a)          \
                                                 : static_cast<R>(b);         \
  }                                                                           \
  static inline __host__ R min(const A a, const B b) {                        \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a)          \
                                                 : static_cast<R>(b);         \
  }
SMPART_MINMAX(int, int, int)
SMPART_MINMAX(unsigned int, unsigned int, unsigned int)
SMPART_MINMAX(unsigned int, int, unsigned int)
SMPART_MINMAX(unsigned int, unsigned int, int)
SMPART_MINMAX(long int, long int, long int)
SMPART_MINMAX(unsigned long int, unsigned long int, unsigned long int)
SMPART_MINMAX(unsigned long int, long int, unsigned long int)
SMPART_MINMAX(unsigned long int, unsigned long int, long int)
SMPART_MINMAX(long long int, long long int, long long int)
SMPART_MINMAX(unsigned long long int, unsigned long long int,
              unsigned long long int)
SMPART_MINMAX(unsigned long long int, long long int, unsigned long long int)
SMPART_MINMAX(unsigned long long int, unsigned long long int, long long int)
SMPART_MINMAX(float, float, float)
SMPART_MINMAX(double, double, double)
SMPART_MINMAX(double, float, double)
SMPART_MINMAX(double, double, float)
#undef SMPART_MINMAX

#endif // __CUDA__ && CUDA_VERSION
#endif // SMPART_NVCC_COMPAT_H
