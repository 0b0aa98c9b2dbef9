# smpart_transform(<out_var> SOURCES <file.cu>... [OPTIONS <tool options>...])
#
# The build step a CUDA project adds: runs smpart-transform on each source
# at build time into ${CMAKE_CURRENT_BINARY_DIR}/smpart/, and returns the
# rewritten files in <out_var>, to be compiled (with
# ${SMPART_RUNTIME_INCLUDE_DIR} on the include path) and linked with smpart.
#
#   include(SmpartTransform)
#   smpart_transform(kernels SOURCES src/saxpy.cu OPTIONS --exclude-kernels=debug_)
#   add_library(app_kernels ${kernels})
#   target_link_libraries(app_kernels PRIVATE smpart)
set(SMPART_RUNTIME_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../runtime/include)
# The tool: the smpart-transform target when it is built in this project,
# else an installed or separately built binary.
set(SMPART_TRANSFORM_EXE "" CACHE FILEPATH
  "smpart-transform to run when the tool is not built in this project")

function(smpart_transform out_var)
  cmake_parse_arguments(ARG "" "" "SOURCES;OPTIONS" ${ARGN})
  if(TARGET smpart-transform)
    set(tool smpart-transform)
  elseif(SMPART_TRANSFORM_EXE)
    set(tool ${SMPART_TRANSFORM_EXE})
  else()
    message(FATAL_ERROR "smpart_transform: no smpart-transform target and "
                        "no SMPART_TRANSFORM_EXE")
  endif()
  set(outputs)
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(abs ${source} ABSOLUTE)
    get_filename_component(dir ${abs} DIRECTORY)
    # Unique per source: its path below the source folder (two saxpy.cu in
    # different folders do not collide), or a hash of a path outside it.
    file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${abs})
    if(rel MATCHES "^\\.\\.")
      string(MD5 tag ${dir})
      get_filename_component(name ${abs} NAME)
      set(rel "external-${tag}/${name}")
    endif()
    set(out ${CMAKE_CURRENT_BINARY_DIR}/smpart/${rel})
    get_filename_component(out_dir ${out} DIRECTORY)
    # Every generator needs the folder (Ninja happens to make it, Makefiles
    # do not).
    file(MAKE_DIRECTORY ${out_dir})
    add_custom_command(OUTPUT ${out}
      COMMAND ${tool} ${abs} -o ${out} ${ARG_OPTIONS}
      DEPENDS ${abs} ${tool}
      COMMENT "smpart-transform ${rel}"
      VERBATIM)
    # `#include "local.cuh"` next to the original still resolves when the
    # copy in the build folder is compiled.
    set_property(SOURCE ${out} APPEND PROPERTY INCLUDE_DIRECTORIES ${dir})
    list(APPEND outputs ${out})
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
