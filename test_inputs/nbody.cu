// All-pairs gravitational n-body step (GPU Gems 3, ch. 31): positions as
// float4 (xyz, w = mass), bodies staged through a shared-memory tile,
// softened inverse distance with rsqrtf, then a leapfrog-style integration.
#include <cuda_runtime.h>

#define NBODY_BLOCK 128

// Acceleration on bi from bj, added to ai (ai.w unused).
__device__ inline float4 body_interaction(float4 bi, float4 bj, float4 ai,
                                          float eps2) {
  const float rx = bj.x - bi.x;
  const float ry = bj.y - bi.y;
  const float rz = bj.z - bi.z;
  const float dist2 = rx * rx + ry * ry + rz * rz + eps2;
  const float inv = rsqrtf(dist2);
  const float s = bj.w * inv * inv * inv;
  ai.x += rx * s;
  ai.y += ry * s;
  ai.z += rz * s;
  return ai;
}

// Needs blockDim.x == NBODY_BLOCK; any grid size. Padding bodies have zero
// mass and contribute nothing (eps2 > 0).
__global__ void nbody_forces(const float4 *pos, float4 *acc, int n,
                             float eps2) {
  __shared__ float4 tile[NBODY_BLOCK];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 bi = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

  for (int base = 0; base < n; base += NBODY_BLOCK) {
    const int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
    for (int k = 0; k < NBODY_BLOCK; ++k)
      a = body_interaction(bi, tile[k], a, eps2);
    __syncthreads();
  }
  if (i < n)
    acc[i] = a;
}

// v += a * dt, v *= damping, p += v * dt. Mass (pos.w) is kept.
__global__ void nbody_integrate(float4 *pos, float4 *vel, const float4 *acc,
                                int n, float dt, float damping) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float4 p = pos[i];
  float4 v = vel[i];
  const float4 a = acc[i];
  v.x = (v.x + a.x * dt) * damping;
  v.y = (v.y + a.y * dt) * damping;
  v.z = (v.z + a.z * dt) * damping;
  p.x += v.x * dt;
  p.y += v.y * dt;
  p.z += v.z * dt;
  pos[i] = p;
  vel[i] = v;
}

// Kinetic energy per body, 0.5 * m * |v|^2, packed as float2(energy, speed).
__global__ void nbody_energy(const float4 *pos, const float4 *vel, float2 *out,
                             int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float4 v = vel[i];
    const float v2 = v.x * v.x + v.y * v.y + v.z * v.z;
    out[i] = make_float2(0.5f * pos[i].w * v2, sqrtf(v2));
  }
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_nbody_forces(const float4 *pos, float4 *acc, int n, float eps2,
                         cudaStream_t stream) {
  const int blocks = (n + NBODY_BLOCK - 1) / NBODY_BLOCK;
  nbody_forces<<<blocks, NBODY_BLOCK, 0, stream>>>(pos, acc, n, eps2);
}

void launch_nbody_integrate(float4 *pos, float4 *vel, const float4 *acc, int n,
                            float dt, float damping, cudaStream_t stream) {
  nbody_integrate<<<(n + 255) / 256, 256, 0, stream>>>(pos, vel, acc, n, dt,
                                                       damping);
}

void launch_nbody_energy(const float4 *pos, const float4 *vel, float2 *out,
                         int n) {
  nbody_energy<<<dim3((n + 63) / 64), dim3(64)>>>(pos, vel, out, n);
}
#endif
