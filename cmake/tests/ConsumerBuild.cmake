# Configures and builds cmake/tests/external against an smpart package and
# checks what a user relies on:
#   - the rewrite ran with the target's includes and defines (the sources
#     #error otherwise) and both saxpy.cu got outputs of their own;
#   - a rebuild with nothing changed re-runs nothing;
#   - editing include/ext/scale.cuh re-runs the rewrite of a/saxpy.cu only.
# -DGENERATOR=... -DWORK=<scratch dir> -DSRC=<external project>
#   -DPACKAGE=build|install -DSMPART_BUILD=<smpart build tree>
cmake_minimum_required(VERSION 3.21)
file(REMOVE_RECURSE ${WORK})
file(COPY ${SRC}/ DESTINATION ${WORK}/src)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  set(out "${out}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

if(PACKAGE STREQUAL "install")
  run(${CMAKE_COMMAND} --install ${SMPART_BUILD} --prefix ${WORK}/prefix)
  foreach(f bin/smpart-transform bin/smpart-plan lib/libsmpart.a
            lib/libsmpart_policies.a include/smpart/device.cuh
            include/smpart/runtime.hpp include/smpart/launch.hpp
            include/smpart/policy/policy.hpp
            share/smpart-transform/include/nvcc_compat.h
            bin/smpart-profile
            include/smpart/controller_runtime.hpp
            lib/cmake/smpart/smpartConfig.cmake
            lib/cmake/smpart/smpartConfigVersion.cmake
            lib/cmake/smpart/SmpartTransform.cmake)
    if(NOT EXISTS ${WORK}/prefix/${f})
      message(FATAL_ERROR "cmake --install did not install ${f}")
    endif()
  endforeach()
  # The parse's compatibility header is the tool's, not a runtime header.
  if(EXISTS ${WORK}/prefix/include/smpart/detail/nvcc_compat.h)
    message(FATAL_ERROR "nvcc_compat.h installed with the runtime headers")
  endif()
  set(where -DCMAKE_PREFIX_PATH=${WORK}/prefix)
else()
  set(where -Dsmpart_DIR=${SMPART_BUILD})
endif()

run(${CMAKE_COMMAND} -S ${WORK}/src -B ${WORK}/build -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release ${where})
run(${CMAKE_COMMAND} --build ${WORK}/build)
foreach(dir a b)
  set(xf ${WORK}/build/smpart/consumer/src/${dir}/saxpy.cu)
  if(NOT EXISTS ${xf})
    message(FATAL_ERROR "no rewritten ${xf}\n${out}")
  endif()
  file(READ ${xf} text)
  if(NOT text MATCHES "smpart_cta")
    message(FATAL_ERROR "${xf} was not transformed:\n${text}")
  endif()
endforeach()

run(${CMAKE_COMMAND} --build ${WORK}/build)
if(out MATCHES "smpart-transform")
  message(FATAL_ERROR "a build with nothing changed re-ran the rewrite:\n${out}")
endif()

# A header edit must re-run the rewrite of the file that includes it.
file(APPEND ${WORK}/src/include/ext/scale.cuh "// edited\n")
run(${CMAKE_COMMAND} --build ${WORK}/build)
if(NOT out MATCHES "smpart-transform consumer: src/a/saxpy.cu")
  message(FATAL_ERROR "editing scale.cuh did not re-run the rewrite of "
                      "a/saxpy.cu:\n${out}")
endif()
if(out MATCHES "smpart-transform consumer: src/b/saxpy.cu")
  message(FATAL_ERROR "editing scale.cuh re-ran b/saxpy.cu too:\n${out}")
endif()
message(STATUS "consumer built with ${GENERATOR} against the ${PACKAGE} package")
