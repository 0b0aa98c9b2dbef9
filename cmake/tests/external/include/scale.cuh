#pragma once
#ifndef SCALE
#error "SCALE must be defined"
#endif
__device__ inline float scaled(float v) { return v * SCALE; }
