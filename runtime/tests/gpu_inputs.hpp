// Host launchers of every test_inputs/ file, declared twice: as compiled
// from the original file (namespace gpu_orig_<file>) and from its
// smpart-transform output (gpu_xf_<file>); both are in the smpart_gpu_inputs
// library (runtime/tests/CMakeLists.txt). The signatures are the files' own,
// written once in the table test_inputs/inputs.def.
// OptionPricer::price_grid has no launcher here: nvcc rejects static member
// kernels and the file hides it (and its launcher) from nvcc.
#pragma once

#include <cuda_runtime.h>

#define SMPART_UNPAREN(...) __VA_ARGS__
#define SMPART_INPUT_LAUNCHER(file, ret, fn, params)                           \
  namespace gpu_orig_##file {                                                  \
    ret fn params;                                                             \
  }                                                                            \
  namespace gpu_xf_##file {                                                    \
    ret fn params;                                                             \
  }
#define SMPART_INPUT_LAUNCHER_NS(file, ns, ret, fn, params)                    \
  namespace gpu_orig_##file::ns {                                              \
    ret fn params;                                                             \
  }                                                                            \
  namespace gpu_xf_##file::ns {                                                \
    ret fn params;                                                             \
  }
#include "inputs.def"
#undef SMPART_UNPAREN
