# lit configuration of the smpart-transform tests.
import os

import lit.formats

config.name = "smpart-transform"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cu", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

llvm_bin = config.llvm_tools_dir
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.smpart_transform), llvm_bin,
     config.environment.get("PATH", os.environ.get("PATH", ""))])

inputs = os.path.join(config.test_source_root, "Inputs")
runtime_include = os.path.join(config.smpart_source_dir, "runtime", "include")
# Most tests parse against the 20-line stub cuda.h, as clang's own tests do.
stub_flags = "-nocudainc -nocudalib -I %s" % inputs
config.substitutions.append(("%smpart_binary", config.smpart_transform))
config.substitutions.append(("%smpart", "smpart-transform"))
config.substitutions.append(("%stubflags", stub_flags))
config.substitutions.append(("%inputs", inputs))
config.substitutions.append(("%test_inputs",
                             os.path.join(config.smpart_source_dir,
                                          "test_inputs")))
config.substitutions.append(("%runtime_include", runtime_include))
# The compatibility header the tool pre-includes and its generator
# (passes/nvcc/README.md).
config.substitutions.append(("%gen_intrinsics",
                             "python3 " + os.path.join(
                                 config.smpart_source_dir, "passes", "nvcc",
                                 "gen_intrinsics.py")))
config.substitutions.append(("%nvcc_compat",
                             os.path.join(config.smpart_source_dir, "passes",
                                          "nvcc", "include", "nvcc_compat.h")))
config.substitutions.append(("%cuda_path", config.cuda_path))
config.substitutions.append(("%python", "python3"))

if config.cuda_path and os.path.exists(
        os.path.join(config.cuda_path, "include", "cuda_runtime.h")):
    config.available_features.add("cuda-toolkit")
if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.nvcc))
if config.clangxx and os.path.exists(config.clangxx):
    config.substitutions.append(("%clangxx", config.clangxx))

# libsmpart, for tests that link whole programs.
if os.path.exists(config.smpart_lib):
    config.available_features.add("smpart-runtime")
    config.substitutions.append(("%libsmpart", config.smpart_lib))
