# ctest driver: transform one test input, compile the result with nvcc and
# with clang-22 in CUDA mode, and check that the tool leaves its own output
# unchanged. Run as
#   cmake -DTOOL=... -DINPUT=... -DOUT_DIR=... -DNVCC=... -DCLANGXX=...
#         -DRUNTIME_INCLUDE=... -DCUDA_PATH=... -P CheckTransformedInput.cmake
get_filename_component(name "${INPUT}" NAME_WE)
file(MAKE_DIRECTORY "${OUT_DIR}")
set(out "${OUT_DIR}/${name}.smpart.cu")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o
                  ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${o}\n${e}")
  endif()
  if(e MATCHES "warning: smpart:")
    message(FATAL_ERROR "${what}: a kernel was refused:\n${e}")
  endif()
endfunction()

run("smpart-transform" "${TOOL}" "${INPUT}" -o "${out}"
    "--cuda-path=${CUDA_PATH}")
file(READ "${out}" text)
if(NOT text MATCHES "smpart::detail::Cta smpart_cta")
  message(FATAL_ERROR "${out} has no transformed kernel")
endif()
if(NVCC)
  run("nvcc" "${NVCC}" -arch=sm_90 -c -I "${RUNTIME_INCLUDE}" "${out}"
      -o "${OUT_DIR}/${name}.o")
endif()
run("clang-22" "${CLANGXX}" -x cuda "--cuda-path=${CUDA_PATH}"
    --cuda-gpu-arch=sm_90 -Wno-unknown-cuda-version
    -isystem "${CUDA_PATH}/include/cccl" -I "${RUNTIME_INCLUDE}"
    -fsyntax-only "${out}")
# Idempotence: the tool on its own output changes nothing.
run("smpart-transform (again)" "${TOOL}" "${out}" -o "${out}.again"
    "--cuda-path=${CUDA_PATH}")
file(READ "${out}.again" again)
if(NOT again STREQUAL text)
  message(FATAL_ERROR "second run changed ${out}")
endif()
