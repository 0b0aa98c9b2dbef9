#pragma once
__device__ inline float offset() { return 1.0f; }
