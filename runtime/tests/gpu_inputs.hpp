// Host launchers of every test_inputs/ file, declared twice: as compiled
// from the original file (namespace gpu_orig_<file>) and from its
// smpart-transform output (gpu_xf_<file>); both are in the smpart_gpu_inputs
// library (runtime/tests/CMakeLists.txt). The signatures are the files' own.
// OptionPricer::price_grid has no launcher here: nvcc rejects static member
// kernels and the file hides it (and its launcher) from nvcc.
#pragma once

#include <cuda_runtime.h>

#define SMPART_GPU_DECLARE(file, ret, fn, ...)                                 \
  namespace gpu_orig_##file { ret fn(__VA_ARGS__); }                           \
  namespace gpu_xf_##file { ret fn(__VA_ARGS__); }

#define SMPART_GPU_DECLARE(file, ret, fn, ...)                                        \
  namespace gpu_orig_##file { ret fn(__VA_ARGS__); }                           \
  namespace gpu_xf_##file { ret fn(__VA_ARGS__); }

SMPART_GPU_DECLARE(vector_ops, void, launch_saxpy, int, float, const float *, float *, cudaStream_t)
SMPART_GPU_DECLARE(vector_ops, void, launch_vector_add, const float *, const float *, float *, int)
SMPART_GPU_DECLARE(vector_ops, void, launch_scale_offset, const float *, const float *, int, float, float *, int)
SMPART_GPU_DECLARE(sgemm_tiled, void, launch_sgemm_tiled, int, int, int, float, const float *, const float *, float, float *, cudaStream_t)
SMPART_GPU_DECLARE(sgemm_tiled, void, launch_sgemm_naive, int, int, int, float, const float *, const float *, float, float *)
SMPART_GPU_DECLARE(stencil2d, void, launch_jacobi5_shared, const float *, float *, int, int, float)
SMPART_GPU_DECLARE(stencil2d, void, launch_jacobi5_global, const float *, float *, int, int, float, cudaStream_t)
SMPART_GPU_DECLARE(stencil2d, void, launch_jacobi_count_changed, const float *, const float *, int, float, int *)
SMPART_GPU_DECLARE(reduction, int, launch_reduce_sum, const float *, float *, int, int, cudaStream_t)
SMPART_GPU_DECLARE(reduction, void, launch_reduce_sum_final, const float *, float *, int)
SMPART_GPU_DECLARE(reduction, void, launch_reduce_min_int, const int *, int, int *, cudaStream_t)
SMPART_GPU_DECLARE(histogram, void, launch_histogram256, const unsigned char *, int, unsigned int *, int)
SMPART_GPU_DECLARE(histogram, void, launch_histogram_range, const float *, int, float, float, int, int *, int *, cudaStream_t)
SMPART_GPU_DECLARE(nbody, void, launch_nbody_forces, const float4 *, float4 *, int, float, cudaStream_t)
SMPART_GPU_DECLARE(nbody, void, launch_nbody_integrate, float4 *, float4 *, const float4 *, int, float, float, cudaStream_t)
SMPART_GPU_DECLARE(nbody, void, launch_nbody_energy, const float4 *, const float4 *, float2 *, int)
SMPART_GPU_DECLARE(black_scholes, void, launch_black_scholes, float *, float *, const float *, const float *, const float *, float, float, int)
SMPART_GPU_DECLARE(spmv_csr, void, launch_spmv_csr_scalar, int, const int *, const int *, const float *, const float *, float *, cudaStream_t)
SMPART_GPU_DECLARE(spmv_csr, void, launch_csr_row_lengths, int, const int *, int *, int *)
namespace gpu_orig_spmv_csr { namespace sparse {
void launch_spmv_csr_axpby(int, float, const int *, const int *, const float *, const float *, float, float *);
} }
namespace gpu_xf_spmv_csr { namespace sparse {
void launch_spmv_csr_axpby(int, float, const int *, const int *, const float *, const float *, float, float *);
} }
SMPART_GPU_DECLARE(kmeans_assign, void, launch_kmeans_assign, const float *, const float *, int, int, int, int *, int *, cudaStream_t)
SMPART_GPU_DECLARE(kmeans_assign, void, launch_kmeans_count, const int *, int, int, int *)
SMPART_GPU_DECLARE(kmeans_assign, void, launch_kmeans_update, const float *, const int *, int, int, int, float *)
SMPART_GPU_DECLARE(bfs_frontier, void, launch_bfs_init, int, int, int *, int *, int *)
SMPART_GPU_DECLARE(bfs_frontier, void, launch_bfs_expand, int, const int *, const int *, const int *, int *, int *, int, int *, cudaStream_t)
SMPART_GPU_DECLARE(bfs_frontier, void, launch_bfs_advance, int, int *, int *, cudaStream_t)
SMPART_GPU_DECLARE(bfs_frontier, int, bfs_run, int, const int *, const int *, int, int *, int *, int *, int *, cudaStream_t)
SMPART_GPU_DECLARE(template_kernel, void, launch_block_sum_f32, const float *, float *, int, cudaStream_t)
SMPART_GPU_DECLARE(template_kernel, void, launch_block_sum_i32, const int *, int *, int)
SMPART_GPU_DECLARE(template_kernel, void, launch_axpby_f32, float, const float *, float, float *, int)
SMPART_GPU_DECLARE(template_kernel, void, launch_axpby_i32, int, const int *, int, int *, int)
SMPART_GPU_DECLARE(template_kernel, void, launch_clamp_copy, const float *, float *, float, float, int, cudaStream_t)
SMPART_GPU_DECLARE(grid_stride, void, launch_saxpy_grid_stride, int, float, const float *, float *, cudaStream_t)
SMPART_GPU_DECLARE(grid_stride, void, launch_scale_clamp, float *, int, float)
SMPART_GPU_DECLARE(grid_stride, void, launch_scale_clamp_range, float *, int, float, float, float)
SMPART_GPU_DECLARE(grid_stride, void, launch_copy2d_grid_stride, const float *, float *, int, int, int, int)
SMPART_GPU_DECLARE(grid_stride, void, launch_count_above, const float *, int, float, unsigned int *)
SMPART_GPU_DECLARE(block_helper, void, launch_record_block_ids, dim3, dim3, unsigned int *, unsigned int *, unsigned int *, cudaStream_t)
SMPART_GPU_DECLARE(block_helper, void, launch_volume_scale3d, const float *, float *, int, int, int, float)
SMPART_GPU_DECLARE(block_helper, void, launch_laplacian3d, const float *, float *, int, int, int, cudaStream_t)
SMPART_GPU_DECLARE(transpose, void, launch_transpose_tiled, const float *, float *, int, int, cudaStream_t)
SMPART_GPU_DECLARE(transpose, void, launch_transpose_naive, const float *, float *, int, int)
SMPART_GPU_DECLARE(prefix_scan, int, launch_scan_block_exclusive, const int *, int *, int *, int, int, cudaStream_t)
SMPART_GPU_DECLARE(prefix_scan, void, launch_scan_add_offsets, int *, const int *, int, int, cudaStream_t)
