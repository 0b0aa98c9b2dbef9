#pragma once
__device__ inline float twice(float v) { return 2.0f * v; }
