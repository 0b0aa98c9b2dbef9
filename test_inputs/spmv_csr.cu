// Sparse matrix-vector product in CSR format (SHOC / Parboil spmv style),
// scalar kernel: one row per thread, int row pointers and column indices.
// The kernels live in a namespace, with a helper in a nested namespace.
#include <cuda_runtime.h>

namespace sparse {
namespace detail {

__device__ inline float row_dot(const int *row_ptr, const int *col_idx,
                                const float *vals, const float *x, int row) {
  float sum = 0.0f;
  const int begin = row_ptr[row];
  const int end = row_ptr[row + 1];
  for (int j = begin; j < end; ++j)
    sum += vals[j] * x[col_idx[j]];
  return sum;
}

} // namespace detail

// y = A * x.
__global__ void spmv_csr_scalar(int num_rows, const int *row_ptr,
                                const int *col_idx, const float *vals,
                                const float *x, float *y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= num_rows)
    return;
  y[row] = detail::row_dot(row_ptr, col_idx, vals, x, row);
}

// y = alpha * A * x + beta * y; beta == 0 does not read y.
__global__ void spmv_csr_axpby(int num_rows, float alpha, const int *row_ptr,
                               const int *col_idx, const float *vals,
                               const float *x, float beta, float *y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < num_rows) {
    const float ax = detail::row_dot(row_ptr, col_idx, vals, x, row);
    y[row] = beta == 0.0f ? alpha * ax : alpha * ax + beta * y[row];
  }
}

} // namespace sparse

// Row lengths, and the number of empty rows (integer atomic count).
__global__ void csr_row_lengths(int num_rows, const int *row_ptr, int *lengths,
                                int *empty_rows) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= num_rows)
    return;
  const int len = row_ptr[row + 1] - row_ptr[row];
  lengths[row] = len;
  if (len == 0)
    atomicAdd(empty_rows, 1);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_spmv_csr_scalar(int num_rows, const int *row_ptr,
                            const int *col_idx, const float *vals,
                            const float *x, float *y, cudaStream_t stream) {
  const int block = 128;
  sparse::spmv_csr_scalar<<<(num_rows + block - 1) / block, block, 0, stream>>>(
      num_rows, row_ptr, col_idx, vals, x, y);
}

namespace sparse {
void launch_spmv_csr_axpby(int num_rows, float alpha, const int *row_ptr,
                           const int *col_idx, const float *vals,
                           const float *x, float beta, float *y) {
  spmv_csr_axpby<<<(num_rows + 255) / 256, 256>>>(num_rows, alpha, row_ptr,
                                                  col_idx, vals, x, beta, y);
}
} // namespace sparse

void launch_csr_row_lengths(int num_rows, const int *row_ptr, int *lengths,
                            int *empty_rows) {
  csr_row_lengths<<<(num_rows + 255) / 256, 256>>>(num_rows, row_ptr, lengths,
                                                   empty_rows);
}
#endif
