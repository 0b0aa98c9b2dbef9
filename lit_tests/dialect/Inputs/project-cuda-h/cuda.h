// A project's own header that happens to be called cuda.h.
#pragma once
#define PROJECT_CUDA_H 1
