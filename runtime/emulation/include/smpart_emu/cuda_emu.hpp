// CUDA built-ins for host compilation of kernels (CPU emulation; test
// support only). Force-included (-include) before a .cu file compiled by the
// host compiler with -DSMPART_EMULATION. Vector types (dim3, uint3,
// float4, make_*) come from the real <cuda_runtime.h>; execution
// built-ins are implemented by the emulator (emulator.cpp):
//
// * every CUDA thread is a fiber; __syncthreads is a real barrier over the
//   CTA's live threads; warp intrinsics exchange values among the live
//   lanes of a warp;
// * exactly one CTA runs between two logical-block boundaries, so
//   `__shared__` can be `static` storage and atomics need no locking.
#pragma once

#ifndef SMPART_EMULATION
#define SMPART_EMULATION 1
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#undef __device__
#undef __global__
#undef __host__
#undef __shared__
#undef __constant__
#undef __managed__
#undef __forceinline__
#undef __noinline__
#undef __launch_bounds__
#define __device__
#define __global__
#define __host__
#define __shared__ static
#define __constant__
#define __managed__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)

// Set by the emulator before a fiber runs (one OS thread runs them all).
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
constexpr int warpSize = 32;

namespace smpart {
namespace emu {
namespace rt {
/// Barrier over the CTA's live threads; returns how many passed pred != 0.
int barrier(int pred);
/// Warp collective: deposits `value`, returns the value of lane `src`
/// (own value if src is not a live lane); `ballot` gets the lanes whose
/// value was nonzero.
unsigned long long warpExchange(unsigned long long value, int src,
                                unsigned *ballot);
unsigned laneId();
void *dynamicSmem();
} // namespace rt
} // namespace emu
} // namespace smpart

inline void __syncthreads() { smpart::emu::rt::barrier(0); }
inline int __syncthreads_count(int p) {
  return smpart::emu::rt::barrier(p != 0);
}
inline int __syncthreads_or(int p) {
  return smpart::emu::rt::barrier(p != 0) != 0;
}
inline int __syncthreads_and(int p) {
  const int live = smpart::emu::rt::barrier(1);
  return smpart::emu::rt::barrier(p != 0) == live;
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  smpart::emu::rt::warpExchange(0, 0, nullptr);
}
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
inline long long clock64() { return 0; }

// Atomics: one host thread runs every fiber, switching only at barriers,
// so a plain read-modify-write is atomic.
template <class T, class U> inline T atomicAdd(T *p, U v) {
  T o = *p;
  *p = o + static_cast<T>(v);
  return o;
}
template <class T, class U> inline T atomicSub(T *p, U v) {
  T o = *p;
  *p = o - static_cast<T>(v);
  return o;
}
template <class T, class U> inline T atomicExch(T *p, U v) {
  T o = *p;
  *p = static_cast<T>(v);
  return o;
}
template <class T, class U> inline T atomicMin(T *p, U v) {
  T o = *p;
  *p = std::min(o, static_cast<T>(v));
  return o;
}
template <class T, class U> inline T atomicMax(T *p, U v) {
  T o = *p;
  *p = std::max(o, static_cast<T>(v));
  return o;
}
template <class T, class U> inline T atomicAnd(T *p, U v) {
  T o = *p;
  *p = o & static_cast<T>(v);
  return o;
}
template <class T, class U> inline T atomicOr(T *p, U v) {
  T o = *p;
  *p = o | static_cast<T>(v);
  return o;
}
template <class T, class U> inline T atomicXor(T *p, U v) {
  T o = *p;
  *p = o ^ static_cast<T>(v);
  return o;
}
template <class T, class U, class V> inline T atomicCAS(T *p, U cmp, V v) {
  T o = *p;
  if (o == static_cast<T>(cmp))
    *p = static_cast<T>(v);
  return o;
}
inline unsigned atomicInc(unsigned *p, unsigned m) {
  unsigned o = *p;
  *p = o >= m ? 0 : o + 1;
  return o;
}
inline unsigned atomicDec(unsigned *p, unsigned m) {
  unsigned o = *p;
  *p = (o == 0 || o > m) ? m : o - 1;
  return o;
}

// Bit and integer intrinsics.
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
inline int __mulhi(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) * b) >> 32);
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
// CUDA's integer and floating min/max overloads.
#define SMPART_EMU_MINMAX(T)                                                   \
  inline T min(T a, T b) { return b < a ? b : a; }                             \
  inline T max(T a, T b) { return a < b ? b : a; }
SMPART_EMU_MINMAX(int)
SMPART_EMU_MINMAX(unsigned)
SMPART_EMU_MINMAX(long long)
SMPART_EMU_MINMAX(unsigned long long)
SMPART_EMU_MINMAX(float)
SMPART_EMU_MINMAX(double)
#undef SMPART_EMU_MINMAX
inline unsigned min(int a, unsigned b) {
  return min(static_cast<unsigned>(a), b);
}
inline unsigned min(unsigned a, int b) {
  return min(a, static_cast<unsigned>(b));
}
inline unsigned max(int a, unsigned b) {
  return max(static_cast<unsigned>(a), b);
}
inline unsigned max(unsigned a, int b) {
  return max(a, static_cast<unsigned>(b));
}

// Cache-hinted loads and stores: plain accesses on the host.
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
template <class T> inline T __ldca(const T *p) { return *p; }
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline T __ldlu(const T *p) { return *p; }
template <class T> inline T __ldcv(const T *p) { return *p; }
template <class T> inline void __stcg(T *p, T v) { *p = v; }
template <class T> inline void __stcs(T *p, T v) { *p = v; }
template <class T> inline void __stwb(T *p, T v) { *p = v; }

// Math: host libm stands in for the device's (the emulation compares a
// transformed kernel with the original, both compiled the same way).
// sqrtf, expf, fminf, ... come from <math.h> at global scope.
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __saturatef(float a) {
  return a < 0.f ? 0.f : (a > 1.f ? 1.f : a);
}
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline int __float2int_rn(float a) {
  return static_cast<int>(std::nearbyint(a));
}
inline int __float2int_rz(float a) { return static_cast<int>(a); }
inline float __int2float_rn(int a) { return static_cast<float>(a); }
inline float __int_as_float(int a) {
  float f;
  std::memcpy(&f, &a, 4);
  return f;
}
inline int __float_as_int(float a) {
  int i;
  std::memcpy(&i, &a, 4);
  return i;
}
inline unsigned __float_as_uint(float a) {
  unsigned i;
  std::memcpy(&i, &a, 4);
  return i;
}
inline float __uint_as_float(unsigned a) {
  float f;
  std::memcpy(&f, &a, 4);
  return f;
}

// Warp intrinsics (mask ignored: every live lane of the warp takes part).
namespace smpart {
namespace emu {
template <class T> inline T warpShuffle(T v, int src) {
  static_assert(sizeof(T) <= 8, "shuffle of at most 8 bytes");
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = rt::warpExchange(bits, src, nullptr);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
} // namespace emu
} // namespace smpart

template <class T>
inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
  const int lane = static_cast<int>(smpart::emu::rt::laneId());
  return smpart::emu::warpShuffle(v,
                                  (lane & ~(width - 1)) + (src & (width - 1)));
}
template <class T>
inline T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
  const int lane = static_cast<int>(smpart::emu::rt::laneId());
  const int src = lane + static_cast<int>(d);
  const bool in = (src & ~(width - 1)) == (lane & ~(width - 1));
  return smpart::emu::warpShuffle(v, in ? src : lane);
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
  const int lane = static_cast<int>(smpart::emu::rt::laneId());
  const int src = lane - static_cast<int>(d);
  const bool in = src >= 0 && (src & ~(width - 1)) == (lane & ~(width - 1));
  return smpart::emu::warpShuffle(v, in ? src : lane);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int m, int width = 32) {
  const int lane = static_cast<int>(smpart::emu::rt::laneId());
  const int src = lane ^ m;
  const bool in = (src & ~(width - 1)) == (lane & ~(width - 1));
  return smpart::emu::warpShuffle(v, in ? src : lane);
}
inline unsigned __ballot_sync(unsigned, int pred) {
  unsigned b = 0;
  smpart::emu::rt::warpExchange(pred != 0, 0, &b);
  return b;
}
inline int __any_sync(unsigned m, int pred) {
  return __ballot_sync(m, pred) != 0;
}
inline int __all_sync(unsigned m, int pred) {
  const unsigned live = __ballot_sync(m, 1);
  return __ballot_sync(m, pred) == live;
}
inline unsigned __activemask() { return __ballot_sync(0xffffffffu, 1); }

// What device.cuh needs from the emulator, and the device header itself, so
// that a transformed file's own includes of it are no-ops inside the
// namespace the emulation wraps each file in.
#include "smpart/device.cuh"
#include "smpart/runtime.hpp"
