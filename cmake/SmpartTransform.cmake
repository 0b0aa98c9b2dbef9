# The build step a CUDA project adds: smpart-transform over its .cu files.
#
#   find_package(smpart CONFIG REQUIRED)       # includes this file
#   add_executable(app main.cu kernels/saxpy.cu)
#   target_include_directories(app PRIVATE include)
#   smpart_transform_target(app)               # after the target's sources
#
# smpart_transform_target(<target> [HEADER_FILTER <regex>]
#                         [KERNELS <regex>] [EXCLUDE_KERNELS <regex>]
#                         [OPTIONS <tool options>...] [NO_LINK])
#
# Replaces each CUDA source of <target> (.cu, or LANGUAGE CUDA) by its
# rewritten form, made at build time under
# ${CMAKE_CURRENT_BINARY_DIR}/smpart/<target>/<path relative to the target's
# source dir>/ (so two saxpy.cu in different folders do not collide), and
# links smpart::runtime (NO_LINK: you do it; needed when the target uses the
# plain target_link_libraries() signature).
#  - The parse sees the target's own include directories, compile
#    definitions (both including those of linked targets), CUDA language
#    standard and first CUDA architecture: they are written through
#    generator expressions to a file of one argument per line
#    (--compile-args-file), so list-valued expressions stay whole.
#  - The folder of each original source stays on the include path
#    (-iquote for the tool, -I for the compiler), so "local.cuh" next to it
#    is still found.
#  - The tool writes a depfile of every file the parse read: editing a
#    header re-runs the rewrite (Ninja and Makefiles generators).
#  - HEADER_FILTER rewrites kernels in matching headers too; a rewritten
#    header lands next to the rewritten source, where its `#include
#    "name.cuh"` finds it first. Without it, a kernel in a header is left as
#    it is and the tool warns about launches of it.
# Must be called in the directory that created <target>.
#
# smpart_transform(<out_var> SOURCES <file.cu>... [OPTIONS <tool options>...])
#
# The older form: rewrites the listed files into
# ${CMAKE_CURRENT_BINARY_DIR}/smpart/ and returns the outputs, compile
# settings passed by hand after `OPTIONS --`.
include_guard(GLOBAL)
# Depfiles of custom commands in Ninja and Makefiles need CMake 3.20 and
# CMP0116 (paths made relative to the build tree), whatever the caller's
# cmake_minimum_required says; the functions below keep these settings.
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "smpart's CMake functions need CMake 3.20 or newer")
endif()
cmake_policy(PUSH)
cmake_policy(SET CMP0116 NEW)

# The source tree's runtime headers, when this file is used from it.
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/../runtime/include/smpart/device.cuh)
  set(SMPART_RUNTIME_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../runtime/include)
endif()
# The tool: smpart::transform (built here or imported from the package),
# else an installed or separately built binary.
set(SMPART_TRANSFORM_EXE "" CACHE FILEPATH
  "smpart-transform to run when no smpart::transform target exists")

# <cmd_var>: what to run; <dep_var>: what the rule depends on.
function(_smpart_tool cmd_var dep_var)
  if(TARGET smpart::transform)
    get_target_property(real smpart::transform ALIASED_TARGET)
    if(NOT real)
      set(real smpart::transform)
    endif()
    set(${cmd_var} $<TARGET_FILE:${real}> PARENT_SCOPE)
    set(${dep_var} ${real} PARENT_SCOPE)
  elseif(SMPART_TRANSFORM_EXE)
    set(${cmd_var} ${SMPART_TRANSFORM_EXE} PARENT_SCOPE)
    set(${dep_var} ${SMPART_TRANSFORM_EXE} PARENT_SCOPE)
  else()
    message(FATAL_ERROR "smpart: no smpart::transform target (find_package("
      "smpart) or this project's tool) and no SMPART_TRANSFORM_EXE")
  endif()
endfunction()

function(smpart_transform out_var)
  cmake_parse_arguments(ARG "" "" "SOURCES;OPTIONS" ${ARGN})
  _smpart_tool(tool tool_dep)
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
      COMMAND ${tool} ${abs} -o ${out} --depfile ${out}.d ${ARG_OPTIONS}
      DEPENDS ${abs} ${tool_dep}
      DEPFILE ${out}.d
      COMMENT "smpart-transform ${rel}"
      VERBATIM)
    # `#include "local.cuh"` next to the original still resolves when the
    # copy in the build folder is compiled.
    set_property(SOURCE ${out} APPEND PROPERTY INCLUDE_DIRECTORIES ${dir})
    list(APPEND outputs ${out})
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()

function(smpart_transform_target target)
  cmake_parse_arguments(ARG "NO_LINK" "HEADER_FILTER;KERNELS;EXCLUDE_KERNELS"
    "OPTIONS" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "smpart_transform_target: no target '${target}'")
  endif()
  get_target_property(target_src ${target} SOURCE_DIR)
  if(NOT target_src STREQUAL CMAKE_CURRENT_SOURCE_DIR)
    message(FATAL_ERROR "smpart_transform_target(${target}) must be called "
      "in ${target_src}, where the target is created")
  endif()
  _smpart_tool(tool tool_dep)

  set(base ${CMAKE_CURRENT_BINARY_DIR}/smpart/${target})
  # The target's compile settings, evaluated at generate time, one argument
  # per line.
  set(inc "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(def "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(features "$<TARGET_PROPERTY:${target},COMPILE_FEATURES>")
  set(std "$<TARGET_PROPERTY:${target},CUDA_STANDARD>")
  set(nl "\n")
  set(content "$<$<BOOL:${inc}>:-I$<JOIN:${inc},${nl}-I>${nl}>")
  string(APPEND content "$<$<BOOL:${def}>:-D$<JOIN:${def},${nl}-D>${nl}>")
  foreach(level 14 17 20 23)
    string(APPEND content
      "$<$<IN_LIST:cuda_std_${level},${features}>:-std=c++${level}${nl}>")
  endforeach()
  string(APPEND content "$<$<BOOL:${std}>:-std=c++${std}${nl}>")
  set(args_file ${base}/compile-args-$<CONFIG>.txt)
  file(GENERATE OUTPUT ${args_file} CONTENT "${content}" TARGET ${target})

  # The device-side parse's arch: the first of CUDA_ARCHITECTURES.
  set(tool_options)
  get_target_property(archs ${target} CUDA_ARCHITECTURES)
  if(archs)
    list(GET archs 0 arch)
    string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
    if(arch MATCHES "^[0-9]+[a-z]?$")
      list(APPEND tool_options --cuda-gpu-arch=sm_${arch})
    endif()
  endif()
  if(ARG_HEADER_FILTER)
    list(APPEND tool_options --header-filter=${ARG_HEADER_FILTER})
  endif()
  if(ARG_KERNELS)
    list(APPEND tool_options --kernels=${ARG_KERNELS})
  endif()
  if(ARG_EXCLUDE_KERNELS)
    list(APPEND tool_options --exclude-kernels=${ARG_EXCLUDE_KERNELS})
  endif()

  get_target_property(sources ${target} SOURCES)
  set(new_sources)
  set(rewritten 0)
  foreach(source IN LISTS sources)
    get_source_file_property(lang ${source} LANGUAGE)
    if(source MATCHES "^\\$<" OR NOT (source MATCHES "\\.cu$" OR
                                      lang STREQUAL "CUDA"))
      list(APPEND new_sources ${source})
      continue()
    endif()
    get_filename_component(abs ${source} ABSOLUTE BASE_DIR ${target_src})
    get_filename_component(name ${abs} NAME)
    get_filename_component(src_dir ${abs} DIRECTORY)
    file(RELATIVE_PATH rel ${target_src} ${src_dir})
    if(rel MATCHES "^\\.\\.")
      # Outside the target's folder: a stable name of its own.
      string(MD5 hash ${src_dir})
      string(SUBSTRING ${hash} 0 8 hash)
      set(rel _outside/${hash})
    endif()
    set(out_dir ${base}/${rel})
    set(out ${out_dir}/${name})
    file(RELATIVE_PATH shown ${target_src} ${abs})
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND ${tool} ${abs} --output-dir ${out_dir} --depfile ${out}.d
        --compile-args-file=${args_file} ${tool_options} ${ARG_OPTIONS}
        -- -iquote ${src_dir}
      DEPENDS ${abs} ${tool_dep} ${args_file}
      DEPFILE ${out}.d
      COMMENT "smpart-transform ${target}: ${shown}"
      VERBATIM)
    # The original's folder for its "local.h" includes.
    set_source_files_properties(${out} PROPERTIES
      INCLUDE_DIRECTORIES ${src_dir})
    list(APPEND new_sources ${out})
    math(EXPR rewritten "${rewritten} + 1")
  endforeach()
  if(rewritten EQUAL 0)
    message(WARNING "smpart_transform_target(${target}): no CUDA sources")
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${new_sources})
  if(NOT ARG_NO_LINK)
    target_link_libraries(${target} PRIVATE smpart::runtime)
  endif()
endfunction()

cmake_policy(POP)
