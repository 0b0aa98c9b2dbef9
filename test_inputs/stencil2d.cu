// 2-D 5-point weighted Jacobi stencil (Rodinia hotspot / Parboil stencil
// style) over an nx-by-ny grid stored row-major. Boundary cells are copied.
#include <cuda_runtime.h>

#define STENCIL_BX 32
#define STENCIL_BY 8

// Shared-memory version with a one-cell halo. Needs
// blockDim = (STENCIL_BX, STENCIL_BY); any 2-D grid size works.
__global__ void jacobi5_shared(const float *in, float *out, int nx, int ny,
                               float w) {
  __shared__ float tile[STENCIL_BY + 2][STENCIL_BX + 2];

  const int gx = blockIdx.x * STENCIL_BX + threadIdx.x;
  const int gy = blockIdx.y * STENCIL_BY + threadIdx.y;
  const int lx = threadIdx.x + 1;
  const int ly = threadIdx.y + 1;
  const bool inside = gx < nx && gy < ny;

  tile[ly][lx] = inside ? in[gy * nx + gx] : 0.0f;
  if (threadIdx.x == 0)
    tile[ly][0] =
        (gx > 0 && gx - 1 < nx && gy < ny) ? in[gy * nx + gx - 1] : 0.0f;
  if (threadIdx.x == STENCIL_BX - 1)
    tile[ly][lx + 1] = (gx + 1 < nx && gy < ny) ? in[gy * nx + gx + 1] : 0.0f;
  if (threadIdx.y == 0)
    tile[0][lx] =
        (gy > 0 && gy - 1 < ny && gx < nx) ? in[(gy - 1) * nx + gx] : 0.0f;
  if (threadIdx.y == STENCIL_BY - 1)
    tile[ly + 1][lx] = (gy + 1 < ny && gx < nx) ? in[(gy + 1) * nx + gx] : 0.0f;
  __syncthreads();

  if (inside) {
    const float c = tile[ly][lx];
    if (gx == 0 || gy == 0 || gx == nx - 1 || gy == ny - 1) {
      out[gy * nx + gx] = c;
    } else {
      const float sum = tile[ly][lx - 1] + tile[ly][lx + 1] + tile[ly - 1][lx] +
                        tile[ly + 1][lx];
      out[gy * nx + gx] = (1.0f - w) * c + w * 0.25f * sum;
    }
  }
}

// Same stencil straight from global memory, with early returns; any 2-D block
// shape works.
__global__ void jacobi5_global(const float *in, float *out, int nx, int ny,
                               float w) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny)
    return;
  const int idx = y * nx + x;
  const float c = in[idx];
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
    out[idx] = c;
    return;
  }
  const float sum = in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx];
  out[idx] = (1.0f - w) * c + w * 0.25f * sum;
}

// Counts the cells whose value changed by more than tol between two sweeps
// (a convergence test); an integer count, so the atomics' order is irrelevant.
__global__ void jacobi_count_changed(const float *a, const float *b, int count,
                                     float tol, int *changed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  if (fabsf(a[i] - b[i]) > tol)
    atomicAdd(changed, 1);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_jacobi5_shared(const float *in, float *out, int nx, int ny,
                           float w) {
  dim3 block(STENCIL_BX, STENCIL_BY);
  dim3 grid((nx + STENCIL_BX - 1) / STENCIL_BX,
            (ny + STENCIL_BY - 1) / STENCIL_BY);
  jacobi5_shared<<<grid, block>>>(in, out, nx, ny, w);
}

void launch_jacobi5_global(const float *in, float *out, int nx, int ny, float w,
                           cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid((nx + 15) / 16, (ny + 15) / 16);
  jacobi5_global<<<grid, block, 0, stream>>>(in, out, nx, ny, w);
}

void launch_jacobi_count_changed(const float *a, const float *b, int count,
                                 float tol, int *changed) {
  jacobi_count_changed<<<(count + 255) / 256, 256>>>(a, b, count, tol, changed);
}
#endif
