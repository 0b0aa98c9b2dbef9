#include "local.cuh"
// A definition with a space and quotes must arrive as one argument.
static_assert(sizeof(EXT_TEXT) == 10, "EXT_TEXT is \"two words\"");
namespace b {
__global__ void saxpy(int n, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = twice(x[i]) + y[i];
}
void run(int n, const float *x, float *y) { saxpy<<<8, 128>>>(n, x, y); }
} // namespace b
