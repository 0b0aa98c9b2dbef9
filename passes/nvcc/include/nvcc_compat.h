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

// crt/device_functions.h: the memory orders and scopes of nvcc's atomic
// builtins (__nv_atomic_fetch_add & co., CUDA 12.8). clang's wrapper does
// not include that header, and has no such builtins: declared for the
// parse, as nvcc's documentation gives them.
enum {
  __NV_ATOMIC_RELAXED,
  __NV_ATOMIC_CONSUME,
  __NV_ATOMIC_ACQUIRE,
  __NV_ATOMIC_RELEASE,
  __NV_ATOMIC_ACQ_REL,
  __NV_ATOMIC_SEQ_CST
};
enum {
  __NV_THREAD_SCOPE_THREAD,
  __NV_THREAD_SCOPE_BLOCK,
  __NV_THREAD_SCOPE_CLUSTER,
  __NV_THREAD_SCOPE_DEVICE,
  __NV_THREAD_SCOPE_SYSTEM
};
#define SMPART_ATOMIC_RMW(Name)                                                \
  template <class T>                                                           \
  __device__ T Name(T *ptr, T val, int order,                                  \
                    int scope = __NV_THREAD_SCOPE_SYSTEM);
SMPART_ATOMIC_RMW(__nv_atomic_fetch_add)
SMPART_ATOMIC_RMW(__nv_atomic_fetch_sub)
SMPART_ATOMIC_RMW(__nv_atomic_fetch_min)
SMPART_ATOMIC_RMW(__nv_atomic_fetch_max)
SMPART_ATOMIC_RMW(__nv_atomic_fetch_and)
SMPART_ATOMIC_RMW(__nv_atomic_fetch_or)
SMPART_ATOMIC_RMW(__nv_atomic_fetch_xor)
SMPART_ATOMIC_RMW(__nv_atomic_exchange_n)
#undef SMPART_ATOMIC_RMW
template <class T>
__device__ void __nv_atomic_load(T *ptr, T *ret, int order,
                                 int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ T __nv_atomic_load_n(T *ptr, int order,
                                int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ void __nv_atomic_store(T *ptr, T *val, int order,
                                  int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ void __nv_atomic_store_n(T *ptr, T val, int order,
                                    int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ void __nv_atomic_exchange(T *ptr, T *val, T *ret, int order,
                                     int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ bool
__nv_atomic_compare_exchange(T *ptr, T *expected, T *desired, bool weak,
                             int success_order, int failure_order,
                             int scope = __NV_THREAD_SCOPE_SYSTEM);
template <class T>
__device__ bool
__nv_atomic_compare_exchange_n(T *ptr, T *expected, T desired, bool weak,
                               int success_order, int failure_order,
                               int scope = __NV_THREAD_SCOPE_SYSTEM);
__device__ void __nv_atomic_thread_fence(int order,
                                         int scope = __NV_THREAD_SCOPE_SYSTEM);

// BEGIN gen_intrinsics.py: the device functions of the CUDA 13.0
// headers (nvcc, sm_90) that clang's CUDA wrapper lacks.
// Regenerate with gen_intrinsics.py --update-compat.
__device__ float __tanhf(float);
__device__ int __signbit(double);
__device__ int __signbitl(long double);
__device__ int __finitel(long double);
__device__ int __isinfl(long double);
__device__ int __isnanl(long double);
__device__ unsigned long __ldcg(const unsigned long *);
__device__ long __ldca(const long *);
__device__ unsigned long __ldca(const unsigned long *);
__device__ char __ldca(const char *);
__device__ signed char __ldca(const signed char *);
__device__ short __ldca(const short *);
__device__ int __ldca(const int *);
__device__ long long __ldca(const long long *);
__device__ char2 __ldca(const char2 *);
__device__ char4 __ldca(const char4 *);
__device__ short2 __ldca(const short2 *);
__device__ short4 __ldca(const short4 *);
__device__ int2 __ldca(const int2 *);
__device__ int4 __ldca(const int4 *);
__device__ longlong2 __ldca(const longlong2 *);
__device__ unsigned char __ldca(const unsigned char *);
__device__ unsigned short __ldca(const unsigned short *);
__device__ unsigned int __ldca(const unsigned int *);
__device__ unsigned long long __ldca(const unsigned long long *);
__device__ uchar2 __ldca(const uchar2 *);
__device__ uchar4 __ldca(const uchar4 *);
__device__ ushort2 __ldca(const ushort2 *);
__device__ ushort4 __ldca(const ushort4 *);
__device__ uint2 __ldca(const uint2 *);
__device__ uint4 __ldca(const uint4 *);
__device__ ulonglong2 __ldca(const ulonglong2 *);
__device__ float __ldca(const float *);
__device__ double __ldca(const double *);
__device__ float2 __ldca(const float2 *);
__device__ float4 __ldca(const float4 *);
__device__ double2 __ldca(const double2 *);
__device__ unsigned long __ldcs(const unsigned long *);
__device__ long __ldlu(const long *);
__device__ unsigned long __ldlu(const unsigned long *);
__device__ char __ldlu(const char *);
__device__ signed char __ldlu(const signed char *);
__device__ short __ldlu(const short *);
__device__ int __ldlu(const int *);
__device__ long long __ldlu(const long long *);
__device__ char2 __ldlu(const char2 *);
__device__ char4 __ldlu(const char4 *);
__device__ short2 __ldlu(const short2 *);
__device__ short4 __ldlu(const short4 *);
__device__ int2 __ldlu(const int2 *);
__device__ int4 __ldlu(const int4 *);
__device__ longlong2 __ldlu(const longlong2 *);
__device__ unsigned char __ldlu(const unsigned char *);
__device__ unsigned short __ldlu(const unsigned short *);
__device__ unsigned int __ldlu(const unsigned int *);
__device__ unsigned long long __ldlu(const unsigned long long *);
__device__ uchar2 __ldlu(const uchar2 *);
__device__ uchar4 __ldlu(const uchar4 *);
__device__ ushort2 __ldlu(const ushort2 *);
__device__ ushort4 __ldlu(const ushort4 *);
__device__ uint2 __ldlu(const uint2 *);
__device__ uint4 __ldlu(const uint4 *);
__device__ ulonglong2 __ldlu(const ulonglong2 *);
__device__ float __ldlu(const float *);
__device__ double __ldlu(const double *);
__device__ float2 __ldlu(const float2 *);
__device__ float4 __ldlu(const float4 *);
__device__ double2 __ldlu(const double2 *);
__device__ unsigned long __ldcv(const unsigned long *);
__device__ void __stwb(long *, long);
__device__ void __stwb(unsigned long *, unsigned long);
__device__ void __stwb(char *, char);
__device__ void __stwb(signed char *, signed char);
__device__ void __stwb(short *, short);
__device__ void __stwb(int *, int);
__device__ void __stwb(long long *, long long);
__device__ void __stwb(char2 *, char2);
__device__ void __stwb(char4 *, char4);
__device__ void __stwb(short2 *, short2);
__device__ void __stwb(short4 *, short4);
__device__ void __stwb(int2 *, int2);
__device__ void __stwb(int4 *, int4);
__device__ void __stwb(longlong2 *, longlong2);
__device__ void __stwb(unsigned char *, unsigned char);
__device__ void __stwb(unsigned short *, unsigned short);
__device__ void __stwb(unsigned int *, unsigned int);
__device__ void __stwb(unsigned long long *, unsigned long long);
__device__ void __stwb(uchar2 *, uchar2);
__device__ void __stwb(uchar4 *, uchar4);
__device__ void __stwb(ushort2 *, ushort2);
__device__ void __stwb(ushort4 *, ushort4);
__device__ void __stwb(uint2 *, uint2);
__device__ void __stwb(uint4 *, uint4);
__device__ void __stwb(ulonglong2 *, ulonglong2);
__device__ void __stwb(float *, float);
__device__ void __stwb(double *, double);
__device__ void __stwb(float2 *, float2);
__device__ void __stwb(float4 *, float4);
__device__ void __stwb(double2 *, double2);
__device__ void __stcg(long *, long);
__device__ void __stcg(unsigned long *, unsigned long);
__device__ void __stcg(char *, char);
__device__ void __stcg(signed char *, signed char);
__device__ void __stcg(short *, short);
__device__ void __stcg(int *, int);
__device__ void __stcg(long long *, long long);
__device__ void __stcg(char2 *, char2);
__device__ void __stcg(char4 *, char4);
__device__ void __stcg(short2 *, short2);
__device__ void __stcg(short4 *, short4);
__device__ void __stcg(int2 *, int2);
__device__ void __stcg(int4 *, int4);
__device__ void __stcg(longlong2 *, longlong2);
__device__ void __stcg(unsigned char *, unsigned char);
__device__ void __stcg(unsigned short *, unsigned short);
__device__ void __stcg(unsigned int *, unsigned int);
__device__ void __stcg(unsigned long long *, unsigned long long);
__device__ void __stcg(uchar2 *, uchar2);
__device__ void __stcg(uchar4 *, uchar4);
__device__ void __stcg(ushort2 *, ushort2);
__device__ void __stcg(ushort4 *, ushort4);
__device__ void __stcg(uint2 *, uint2);
__device__ void __stcg(uint4 *, uint4);
__device__ void __stcg(ulonglong2 *, ulonglong2);
__device__ void __stcg(float *, float);
__device__ void __stcg(double *, double);
__device__ void __stcg(float2 *, float2);
__device__ void __stcg(float4 *, float4);
__device__ void __stcg(double2 *, double2);
__device__ void __stcs(long *, long);
__device__ void __stcs(unsigned long *, unsigned long);
__device__ void __stcs(char *, char);
__device__ void __stcs(signed char *, signed char);
__device__ void __stcs(short *, short);
__device__ void __stcs(int *, int);
__device__ void __stcs(long long *, long long);
__device__ void __stcs(char2 *, char2);
__device__ void __stcs(char4 *, char4);
__device__ void __stcs(short2 *, short2);
__device__ void __stcs(short4 *, short4);
__device__ void __stcs(int2 *, int2);
__device__ void __stcs(int4 *, int4);
__device__ void __stcs(longlong2 *, longlong2);
__device__ void __stcs(unsigned char *, unsigned char);
__device__ void __stcs(unsigned short *, unsigned short);
__device__ void __stcs(unsigned int *, unsigned int);
__device__ void __stcs(unsigned long long *, unsigned long long);
__device__ void __stcs(uchar2 *, uchar2);
__device__ void __stcs(uchar4 *, uchar4);
__device__ void __stcs(ushort2 *, ushort2);
__device__ void __stcs(ushort4 *, ushort4);
__device__ void __stcs(uint2 *, uint2);
__device__ void __stcs(uint4 *, uint4);
__device__ void __stcs(ulonglong2 *, ulonglong2);
__device__ void __stcs(float *, float);
__device__ void __stcs(double *, double);
__device__ void __stcs(float2 *, float2);
__device__ void __stcs(float4 *, float4);
__device__ void __stcs(double2 *, double2);
__device__ void __stwt(long *, long);
__device__ void __stwt(unsigned long *, unsigned long);
// END gen_intrinsics.py
