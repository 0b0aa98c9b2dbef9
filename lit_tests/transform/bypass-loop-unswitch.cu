// RUN: %smpart %s -- %stubflags | FileCheck %s
// A loop around tagged loads is written once per bypass tag, behind one
// test of it, so that each copy's loads have a constant tag (nvcc then
// batches them as in the original). The outermost such loop is taken, its
// #pragma lines go with it, and #line keeps its lines. (A load spelled in
// a macro argument is not tagged; the macro goes into both copies. The
// asm at the end keeps the body from being written twice as a whole,
// below.) A loop that a second copy would change stays as it is, its
// loads tagged at run time.
#include "cuda.h"

#define TWICE(x) (2 * (x))

__global__ void dot(int n, const float *a, const float *b, float *out) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 4; ++j)
      sum += a[i * 4 + j] * TWICE(b[j]);
#pragma unroll 4
  for (int k = 0; k < 8; ++k) {
    if (a[k] < 0.0f)
      return;
    sum += a[k];
  }
  int k = 0;
  do
    sum += b[k];
  while (++k < n);
  out[threadIdx.x] = sum + a[0]; asm volatile("");
}

// CHECK-LABEL: {{^}}__global__ void dot(smpart::LaunchControl smpart_ctl,
// CHECK: {{^}}  { // smpart: once per bypass tag, so that its loads' tag is a constant
// CHECK-NEXT: {{^}}  if (smpart_cta.bypass()) {
// CHECK-NEXT: {{^}}#line 16 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}  for (int i = 0; i < n; ++i)
// CHECK-NEXT: {{^}}    for (int j = 0; j < 4; ++j)
// CHECK-NEXT: {{^}}      sum += smpart::load(&a[i * 4 + j], true) * TWICE(b[j]);
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}#line 16 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}  for (int i = 0; i < n; ++i)
// CHECK-NEXT: {{^}}    for (int j = 0; j < 4; ++j)
// CHECK-NEXT: {{^}}      sum += smpart::load(&a[i * 4 + j], false) * TWICE(b[j]);
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}#line 18 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}{ // smpart: once per bypass tag, so that its loads' tag is a constant
// CHECK-NEXT: {{^}}if (smpart_cta.bypass()) {
// CHECK-NEXT: {{^}}#line 19 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}#pragma unroll 4
// CHECK-NEXT: {{^}}  for (int k = 0; k < 8; ++k) {
// CHECK-NEXT: {{^}}    if (smpart::load(&a[k], true) < 0.0f)
// CHECK-NEXT: {{^}}      goto smpart_next_block;
// CHECK-NEXT: {{^}}    sum += smpart::load(&a[k], true);
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}} else {
// CHECK-NEXT: {{^}}#line 19 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}#pragma unroll 4
// CHECK:      {{^}}    sum += smpart::load(&a[k], false);
// CHECK:      {{^}}#line 24 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  int k = 0;
// CHECK-NEXT: {{^}}  { // smpart: once per bypass tag, so that its loads' tag is a constant
// CHECK-NEXT: {{^}}  if (smpart_cta.bypass()) {
// CHECK-NEXT: {{^}}#line 26 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}  do
// CHECK-NEXT: {{^}}    sum += smpart::load(&b[k], true);
// CHECK-NEXT: {{^}}  while (++k < n);
// CHECK-NEXT: {{^}}  } else {
// CHECK:      {{^}}  while (++k < n);
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}#line 28 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  out[threadIdx.x] = sum + smpart::load(&a[0], smpart_cta.bypass()); asm volatile("");

// A copy would change these loops: a second __shared__ array, a second
// static, a label defined twice, a `case` of the enclosing switch twice, a
// conditional split by a directive. The inner loop with nothing of that
// is taken where the outer one is not.
__global__ void kept(int n, const float *a, float *out, int mode) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    __shared__ float tile[32];
    tile[threadIdx.x] = a[i];
    sum += tile[0];
  }
  for (int i = 0; i < n; ++i) {
    static __device__ int calls;
    sum += a[i] + calls;
  }
  for (int i = 0; i < n; ++i) {
  again:
    sum += a[i];
    if (sum < 0.0f)
      goto again;
  }
  int i = 0;
  switch (mode) {
    while (i < n) {
    case 1:
      sum += a[i++];
    }
  }
  for (int i = 0; i < n; ++i) {
#if defined(__CUDA_ARCH__)
    sum += a[i];
#endif
  }
  for (int i = 0; i < n; ++i) {
  skip:
    for (int j = 0; j < n; ++j)
      sum += a[j];
  }
  out[0] = sum;
}

// CHECK-LABEL: {{^}}__global__ void kept(smpart::LaunchControl smpart_ctl,
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    tile[threadIdx.x] = smpart::load(&a[i], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    sum += smpart::load(&a[i], smpart_cta.bypass()) + calls;
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    sum += smpart::load(&a[i], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}      sum += smpart::load(&a[i++], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    sum += smpart::load(&a[i], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}  skip:
// CHECK-NEXT: {{^}}    { // smpart: once per bypass tag, so that its loads' tag is a constant
// CHECK-NEXT: {{^}}    if (smpart_cta.bypass()) {
// CHECK-NEXT: {{^}}#line 113 "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}    for (int j = 0; j < n; ++j)
// CHECK-NEXT: {{^}}      sum += smpart::load(&a[j], true);
// CHECK: {{^}}  out[0] = sum;

// A load that initialises a declaration is found through it.
__global__ void copy(int n, const float *a, float *out) {
  for (int i = 0; i < n; ++i) {
    const float x = a[i];
    out[i] = x;
  }
}

// CHECK-LABEL: {{^}}__global__ void copy(smpart::LaunchControl smpart_ctl,
// CHECK: {{^}}  if (smpart_cta.bypass()) {
// CHECK: {{^}}    const float x = smpart::load(&a[i], true);
// CHECK: {{^}}    const float x = smpart::load(&a[i], false);

// The copies keep the `;` of a body that ends in a braced initialiser. A
// loop after a directive (a conditional #pragma unroll) keeps the
// run-time tag, as does one that a parse sees differently (a counter on
// the device only), and a template's loop with a label in a branch
// `if constexpr` discards.
#ifdef __CUDA_ARCH__
#define COUNT()                                                                \
  do {                                                                         \
    static __device__ int calls;                                               \
    ++calls;                                                                   \
  } while (0)
#else
#define COUNT()                                                                \
  do {                                                                         \
  } while (0)
#endif

template <bool B> __global__ void edges(int n, const float *a, float *out) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += float{a[i]};
#ifdef __CUDA_ARCH__
#pragma unroll 4
#endif
  for (int i = 0; i < n; ++i)
    s -= a[i];
  for (int i = 0; i < n; ++i) {
    s += a[i];
    COUNT();
  }
  for (int i = 0; i < n; ++i) {
    s *= a[i];
    if constexpr (B) {
    again:
      if (s < 0.0f)
        goto again;
    }
  }
  out[0] = s;
}
template __global__ void edges<false>(int, const float *, float *);

// CHECK-LABEL: {{^}}template <bool B> __global__ void edges(smpart::LaunchControl smpart_ctl,
// CHECK: {{^}}  if (smpart_cta.bypass()) {
// CHECK-NEXT: #line
// CHECK-NEXT: {{^}}  for (int i = 0; i < n; ++i) s += float{smpart::load(&a[i], true)};
// CHECK: {{^}}  for (int i = 0; i < n; ++i) s += float{smpart::load(&a[i], false)};
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    s -= smpart::load(&a[i], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    s += smpart::load(&a[i], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}    s *= smpart::load(&a[i], smpart_cta.bypass());
// CHECK-NOT: once per bypass tag
// CHECK: {{^}}  out[0] = s;

// A body with nothing that prevents it is written twice as a whole, its
// straight-line loads and loops together; one with a __shared__
// declaration only has its loops written twice.
__global__ void whole(int n, const float *a, float *out) {
  float s = a[0] + a[1];
  for (int i = 0; i < n; ++i)
    s += a[i];
  out[0] = s;
}

__global__ void tiled(int n, const float *a, float *out) {
  __shared__ float tile[32];
  tile[threadIdx.x] = a[threadIdx.x];
  float s = tile[0] + a[1];
  for (int i = 0; i < n; ++i)
    s += a[i];
  out[0] = s;
}

// CHECK-LABEL: {{^}}__global__ void whole(smpart::LaunchControl smpart_ctl,
// CHECK: {{^}}#line [[#WHOLE:]] "{{.*}}bypass-loop-unswitch.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  { // smpart: once per bypass tag, so that its loads' tag is a constant
// CHECK-NEXT: {{^}}  if (smpart_cta.bypass()) {
// CHECK-NEXT: {{^}}#line [[#WHOLE+1]] "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}  float s = smpart::load(&a[0], true) + smpart::load(&a[1], true);
// CHECK-NEXT: {{^}}  for (int i = 0; i < n; ++i)
// CHECK-NEXT: {{^}}    s += smpart::load(&a[i], true);
// CHECK-NEXT: {{^}}  out[0] = s;
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}#line [[#WHOLE+1]] "{{.*}}bypass-loop-unswitch.cu"
// CHECK-NEXT: {{^}}  float s = smpart::load(&a[0], false) + smpart::load(&a[1], false);
// CHECK: {{^}}  out[0] = s;
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}#line [[#WHOLE+4]] "{{.*}}bypass-loop-unswitch.cu"

// CHECK-LABEL: {{^}}__global__ void tiled(smpart::LaunchControl smpart_ctl,
// CHECK: {{^}}  tile[threadIdx.x] = smpart::load(&a[threadIdx.x], smpart_cta.bypass());
// CHECK-NEXT: {{^}}  float s = tile[0] + smpart::load(&a[1], smpart_cta.bypass());
// CHECK-NEXT: {{^}}  { // smpart: once per bypass tag, so that its loads' tag is a constant
// CHECK: {{^}}    s += smpart::load(&a[i], true);
