// Pre-included by smpart-transform (never by compiled code) when it parses
// a file with the CUDA toolkit's headers: what nvcc's own headers bring in
// that clang's CUDA wrapper does not, so that code nvcc compiles parses
// too. nvcc's crt/common_functions.h includes these C headers, and real
// code relies on it (time(), srand(), memcpy(), printf() without the
// include).
#pragma once

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// crt/math_functions.hpp: host max/min for mixed signed, unsigned and
// floating arguments. clang's wrapper has them on the device side only;
// host code such as `max(unsigned, int)` needs them too (in both parses:
// host functions are checked in the device-side parse too).
#define SMPART_MINMAX(R, A, B)                                                 \
  static inline __host__ R max(const A a, const B b) {                         \
    return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a)           \
                                                 : static_cast<R>(b);          \
  }                                                                            \
  static inline __host__ R min(const A a, const B b) {                         \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a)           \
                                                 : static_cast<R>(b);          \
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
