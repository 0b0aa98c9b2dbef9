// Black-Scholes European option pricing (CUDA samples BlackScholes): a
// __device__ cumulative-normal helper, a pricing helper that returns through
// references, a free kernel and (for Clang only) a static member kernel.
#include <cuda_runtime.h>

// Polynomial approximation of the cumulative normal distribution.
__device__ inline float cnd(float d) {
  const float A1 = 0.31938153f;
  const float A2 = -0.356563782f;
  const float A3 = 1.781477937f;
  const float A4 = -1.821255978f;
  const float A5 = 1.330274429f;
  const float RSQRT2PI = 0.39894228040143267794f;

  const float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = RSQRT2PI * expf(-0.5f * d * d) *
            (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  if (d > 0.0f)
    c = 1.0f - c;
  return c;
}

__device__ inline void black_scholes_body(float &call, float &put, float s,
                                          float x, float t, float r, float v) {
  const float sqrt_t = sqrtf(t);
  const float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / (v * sqrt_t);
  const float d2 = d1 - v * sqrt_t;
  const float cnd_d1 = cnd(d1);
  const float cnd_d2 = cnd(d2);
  const float exp_rt = expf(-r * t);
  call = s * cnd_d1 - x * exp_rt * cnd_d2;
  put = x * exp_rt * (1.0f - cnd_d2) - s * (1.0f - cnd_d1);
}

// One option per thread; options with a non-positive expiry are priced at
// their intrinsic value and leave early.
__global__ void black_scholes(float *call, float *put, const float *stock,
                              const float *strike, const float *years,
                              float riskfree, float volatility, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const float s = stock[i];
  const float x = strike[i];
  const float t = years[i];
  if (t <= 0.0f) {
    call[i] = fmaxf(s - x, 0.0f);
    put[i] = fmaxf(x - s, 0.0f);
    return;
  }
  float c, p;
  black_scholes_body(c, p, s, x, t, riskfree, volatility);
  call[i] = c;
  put[i] = p;
}

// Batched pricer with per-option volatility, as a static member kernel.
// Clang accepts static member kernels but nvcc rejects any __global__ member
// function, so the class is hidden from nvcc (which defines __NVCC__).
#if !defined(__NVCC__)
class OptionPricer {
public:
  static __global__ void price_grid(const float *stock, const float *strike,
                                    const float *years, const float *vol,
                                    float riskfree, float *call, float *put,
                                    int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += blockDim.x * gridDim.x) {
      float c, p;
      const float v = fminf(fmaxf(vol[i], 0.01f), 5.0f);
      black_scholes_body(c, p, stock[i], strike[i], fmaxf(years[i], 1.0e-4f),
                         riskfree, v);
      call[i] = c;
      put[i] = p;
    }
  }
};
#endif

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_black_scholes(float *call, float *put, const float *stock,
                          const float *strike, const float *years,
                          float riskfree, float volatility, int n) {
  black_scholes<<<(n + 127) / 128, 128>>>(call, put, stock, strike, years,
                                          riskfree, volatility, n);
}

#if !defined(__NVCC__)
void launch_option_pricer(const float *stock, const float *strike,
                          const float *years, const float *vol, float riskfree,
                          float *call, float *put, int n, cudaStream_t stream) {
  // A fixed grid; the kernel strides over the rest.
  OptionPricer::price_grid<<<64, 256, 0, stream>>>(stock, strike, years, vol,
                                                   riskfree, call, put, n);
}
#endif // !__NVCC__
#endif
