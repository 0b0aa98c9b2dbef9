// Matrix transpose (CUDA samples transposeCoalesced): 32x32 tiles with a
// padded shared-memory array to avoid bank conflicts, 32x8 thread blocks
// each moving a tile in four row steps; plus a naive reference kernel.
#include <cuda_runtime.h>

#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8

// out (width x height) = in (height x width)^T. Needs
// blockDim = (TRANSPOSE_TILE, TRANSPOSE_ROWS).
__global__ void transpose_tiled(const float *in, float *out, int width,
                                int height) {
  __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];

  int x = blockIdx.x * TRANSPOSE_TILE + threadIdx.x;
  int y = blockIdx.y * TRANSPOSE_TILE + threadIdx.y;
  for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
    if (x < width && y + j < height)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  }
  __syncthreads();

  x = blockIdx.y * TRANSPOSE_TILE + threadIdx.x;
  y = blockIdx.x * TRANSPOSE_TILE + threadIdx.y;
  for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
    if (x < height && y + j < width)
      out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

__global__ void transpose_naive(const float *in, float *out, int width,
                                int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height)
    return;
  out[x * height + y] = in[y * width + x];
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_transpose_tiled(const float *in, float *out, int width, int height,
                            cudaStream_t stream) {
  dim3 grid((width + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE,
            (height + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE);
  dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
  transpose_tiled<<<grid, block, 0, stream>>>(in, out, width, height);
}

void launch_transpose_naive(const float *in, float *out, int width,
                            int height) {
  transpose_naive<<<dim3((width + 15) / 16, (height + 15) / 16),
                    dim3(16, 16)>>>(in, out, width, height);
}
#endif
