# gpucheck_layer(NAME FOLDER <folder of src/> [EXPORTS <path>=<include name>...]
#                [PUBLIC <targets>...] [PRIVATE <targets>...] [SOURCES <files>...] [CUDA_HEADERS]
#                [RECURSE])
#
# One static library, gpucheck_NAME, of src/FOLDER/*.cpp (docs/architecture.md, "Folders").
# Its include root is build/layers/NAME, which holds only a link FOLDER ->
# src/FOLDER and the EXPORTS (links to public headers of include/gpucheck/, the kernels' shared
# header): a library sees its own root and those of the libraries it links (PUBLIC ones pass on,
# PRIVATE ones do not), so `#include "checks/x.hpp"` from a folder that may not include checks
# fails to build. src/ itself is on no library's include path. CUDA_HEADERS gives the toolkit's
# headers (types only; nothing from CUDA is linked). RECURSE takes the sources of FOLDER's
# subfolders too (one per check: src/gpu_checks/), but not their *_test.cpp, which the unit
# tests build. Appends the target to GPUCHECK_LAYERS.

set(GPUCHECK_LAYER_ROOT ${CMAKE_CURRENT_BINARY_DIR}/layers)
set(GPUCHECK_LAYERS "")

function(_gpucheck_layer_link original link)
  get_filename_component(_parent ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${_parent})
  if(IS_SYMLINK ${link})
    file(REMOVE ${link}) # the link only, never what it points to
  endif()
  file(CREATE_LINK ${original} ${link} SYMBOLIC)
endfunction()

function(gpucheck_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 _layer "CUDA_HEADERS;RECURSE" "FOLDER"
                        "EXPORTS;PUBLIC;PRIVATE;SOURCES")
  set(_target gpucheck_${name})
  set(_root ${GPUCHECK_LAYER_ROOT}/${name})
  if(_layer_RECURSE)
    file(GLOB_RECURSE _sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${_layer_FOLDER}/*.cpp)
    list(FILTER _sources EXCLUDE REGEX "_test\\.cpp$")
  else()
    file(GLOB _sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${_layer_FOLDER}/*.cpp)
  endif()
  add_library(${_target} STATIC ${_sources} ${_layer_SOURCES})
  _gpucheck_layer_link(${PROJECT_SOURCE_DIR}/src/${_layer_FOLDER} ${_root}/${_layer_FOLDER})
  foreach(_export IN LISTS _layer_EXPORTS)
    string(REPLACE "=" ";" _pair ${_export})
    list(GET _pair 0 _path)
    list(GET _pair 1 _as)
    _gpucheck_layer_link(${PROJECT_SOURCE_DIR}/${_path} ${_root}/${_as})
  endforeach()
  target_include_directories(${_target} PUBLIC ${_root})
  target_link_libraries(${_target} PUBLIC ${_layer_PUBLIC} PRIVATE ${_layer_PRIVATE}
                        gpucheck_warnings)
  if(_layer_CUDA_HEADERS)
    target_include_directories(${_target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  if(GPUCHECK_PORTABLE)
    gpucheck_portable_includes(${_target})
  endif()
  # One precompiled header for all: the first layer's.
  if(NOT GPUCHECK_LAYERS)
    target_precompile_headers(${_target} PRIVATE
      <nlohmann/json.hpp> <fmt/format.h> <string> <vector> <optional> <map>)
  else()
    list(GET GPUCHECK_LAYERS 0 _first)
    target_precompile_headers(${_target} REUSE_FROM ${_first})
  endif()
  set(GPUCHECK_LAYERS ${GPUCHECK_LAYERS} ${_target} PARENT_SCOPE)
endfunction()
