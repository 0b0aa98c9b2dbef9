// Templated kernels (CUB / Thrust style): a block reduction parameterised on
// element type and block size with __launch_bounds__, a type-generic AXPBY
// whose template argument is deduced at the launch, and a kernel whose block
// size is explicit while its element type is deduced.
#include <cuda_runtime.h>

// Each block sums BLOCK consecutive elements into out[blockIdx.x]. Needs
// blockDim.x == BLOCK (a power of two).
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    block_sum(const T *__restrict__ in, T *__restrict__ out, int n) {
  __shared__ T buf[BLOCK];
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s)
      buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = buf[0];
}

// y = a * x + b * y for any arithmetic T.
template <typename T> __global__ void axpby(T a, const T *x, T b, T *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  y[i] = a * x[i] + b * y[i];
}

// out = clamp(in, lo, hi); at most 2 resident blocks' worth of registers
// requested per SM via the second __launch_bounds__ argument.
template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK, 2)
    clamp_copy(const T *in, T *out, T lo, T hi, int n) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n)
    return;
  const T v = in[i];
  out[i] = v < lo ? lo : (v > hi ? hi : v);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_block_sum_f32(const float *in, float *out, int n,
                          cudaStream_t stream) {
  block_sum<float, 256><<<(n + 255) / 256, 256, 0, stream>>>(in, out, n);
}

void launch_block_sum_i32(const int *in, int *out, int n) {
  block_sum<int, 128><<<(n + 127) / 128, 128>>>(in, out, n);
}

void launch_axpby_f32(float a, const float *x, float b, float *y, int n) {
  axpby<<<(n + 255) / 256, 256>>>(a, x, b, y, n);
}

void launch_axpby_i32(int a, const int *x, int b, int *y, int n) {
  axpby<int><<<(n + 255) / 256, 256>>>(a, x, b, y, n);
}

void launch_clamp_copy(const float *in, float *out, float lo, float hi, int n,
                       cudaStream_t stream) {
  constexpr int kBlock = 512;
  clamp_copy<kBlock>
      <<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(in, out, lo, hi, n);
}
#endif
