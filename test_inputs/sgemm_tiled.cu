// Single-precision GEMM, C = alpha * A * B + beta * C, row-major, in the
// Parboil sgemm style: 16x16 thread blocks over a 2-D grid, A and B staged
// through static shared-memory tiles.
#include <cuda_runtime.h>

#define SGEMM_TILE 16

// Needs blockDim = (SGEMM_TILE, SGEMM_TILE). Out-of-range threads still take
// part in the tile loads and barriers; only the final store is guarded.
__global__ void sgemm_tiled(int M, int N, int K, float alpha, const float *A,
                            int lda, const float *B, int ldb, float beta,
                            float *C, int ldc) {
  __shared__ float As[SGEMM_TILE][SGEMM_TILE];
  __shared__ float Bs[SGEMM_TILE][SGEMM_TILE + 1];

  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * SGEMM_TILE + ty;
  const int col = blockIdx.x * SGEMM_TILE + tx;

  float acc = 0.0f;
  for (int t = 0; t < K; t += SGEMM_TILE) {
    const int ak = t + tx;
    const int bk = t + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * lda + ak] : 0.0f;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * ldb + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < SGEMM_TILE; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }

  if (row < M && col < N) {
    const int idx = row * ldc + col;
    C[idx] = alpha * acc + beta * C[idx];
  }
}

// Reference kernel without shared memory; any 2-D block shape works.
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A,
                            const float *B, float beta, float *C) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N)
    return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_sgemm_tiled(int M, int N, int K, float alpha, const float *A,
                        const float *B, float beta, float *C,
                        cudaStream_t stream) {
  dim3 block(SGEMM_TILE, SGEMM_TILE);
  dim3 grid((N + SGEMM_TILE - 1) / SGEMM_TILE,
            (M + SGEMM_TILE - 1) / SGEMM_TILE);
  sgemm_tiled<<<grid, block, 0, stream>>>(M, N, K, alpha, A, K, B, N, beta, C,
                                          N);
}

void launch_sgemm_naive(int M, int N, int K, float alpha, const float *A,
                        const float *B, float beta, float *C) {
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  sgemm_naive<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}
#endif
