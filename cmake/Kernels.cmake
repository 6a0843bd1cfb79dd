# Embedded GPU kernels: kernels/gpucheck_kernels.cu built by up to three CUDA toolkits into one
# fatbin each, every fatbin .incbin'd into the executable. The run time picks one by the driver's
# version and the GPU's compute capability (src/gpu/kernel_image.cpp, docs/engine.md).
#
#   slot 0, CUDA 13 (the build's nvcc): SASS for every architecture `nvcc --list-gpu-code` lists
#           (sm_75..sm_121 with 13.0) plus PTX for the lowest. Loads on R580 and newer.
#   slot 1, CUDA 12.9 (NVRTC + ptxas wheels): SASS sm_50..sm_121 plus compute_50 PTX whose
#           .version is lowered to 8.0 (CUDA 12.0). Loads on R525 and newer (minor-version
#           compatibility), Maxwell to Blackwell.
#   slot 2, CUDA 11.8 (NVRTC + ptxas wheels): SASS sm_50..sm_90 plus compute_50 PTX lowered to
#           ISA 7.4 (CUDA 11.4, what R470 can JIT). Loads on R450/R470 and newer.
#
# Slots 1 and 2 are built by cmake/nvrtc_image.py from the wheels scripts/install-deps.sh puts in
# GPUCHECK_TOOLCHAINS_DIR (cuda-12.9/, cuda-11.8/); nothing is downloaded here. Without them (or
# without python3) those slots are empty and the binary carries the CUDA 13 image only.
# -no-compress everywhere: compressed fatbins need newer drivers than the toolkit's minimum.
# Nothing from CUDA is linked; the images sit in a .nv_fatbin section and are loaded at run time
# with cuModuleLoadDataEx (src/gpu/kernel_module.cpp).
#
# Outputs: GPUCHECK_KERNEL_OBJECTS (the assembler file to add to gpucheck_gpu),
#          GPUCHECK_KERNEL_DEPENDS (the targets that build the fatbins),
#          generated/kernel_build.hpp (per slot: toolkit release, SASS architectures, PTX ISA).

enable_language(ASM)

set(GPUCHECK_TOOLCHAINS_DIR "$ENV{HOME}/.cache/gpucheck/toolchains" CACHE PATH
    "Where scripts/install-deps.sh put the CUDA 11.8 and 12.9 compiler wheels")
if(DEFINED ENV{GPUCHECK_TOOLCHAINS_DIR} AND NOT "$ENV{GPUCHECK_TOOLCHAINS_DIR}" STREQUAL "")
  set(GPUCHECK_TOOLCHAINS_DIR "$ENV{GPUCHECK_TOOLCHAINS_DIR}" CACHE PATH "" FORCE)
endif()
option(GPUCHECK_OLD_KERNEL_IMAGES "Embed the CUDA 12.9 and 11.8 kernel images when their compilers are present" ON)

set(GPUCHECK_KERNEL_OBJECTS "")
set(GPUCHECK_KERNEL_DEPENDS "")

file(GLOB GPUCHECK_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.cu)
# Headers the kernels share with the host code (the reference values): rebuild when they change.
file(GLOB GPUCHECK_KERNEL_HEADERS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.h)
set(_gpucheck_gen ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(_gpucheck_embed ${CMAKE_CURRENT_BINARY_DIR}/kernels/gpucheck_kernels_embed.S)
file(MAKE_DIRECTORY ${_gpucheck_gen} ${CMAKE_CURRENT_BINARY_DIR}/kernels)

set(_gpucheck_nvcc "")
if(CUDAToolkit_NVCC_EXECUTABLE AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
  set(_gpucheck_nvcc "${CUDAToolkit_NVCC_EXECUTABLE}")
endif()

# Per slot: fatbin path ("" when absent), toolkit release, SASS architectures, PTX ISA.
foreach(_slot 0 1 2)
  set(_fatbin_${_slot} "")
  set(_toolkit_${_slot} "")
  set(_archs_${_slot} "")
  set(_ptx_isa_${_slot} "")
endforeach()

# --- slot 0: the build's nvcc -----------------------------------------------------------------
set(_gpucheck_archs "")
if(_gpucheck_nvcc)
  execute_process(COMMAND ${_gpucheck_nvcc} --list-gpu-code OUTPUT_VARIABLE _codes
                  RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_rc EQUAL 0)
    string(REGEX MATCHALL "sm_[0-9]+[a-z]?" _sms "${_codes}")
    foreach(_sm IN LISTS _sms)
      # Plain numbered targets only: sm_90a and friends are not forward compatible.
      if(_sm MATCHES "^sm_([0-9]+)$")
        list(APPEND _gpucheck_archs ${CMAKE_MATCH_1})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _gpucheck_archs)
    list(SORT _gpucheck_archs COMPARE NATURAL)
  endif()
endif()

if(_gpucheck_archs AND GPUCHECK_KERNEL_SOURCES)
  set(_fatbin_0 ${CMAKE_CURRENT_BINARY_DIR}/kernels/gpucheck_kernels.fatbin)
  set(_gencode "")
  foreach(_arch IN LISTS _gpucheck_archs)
    list(APPEND _gencode -gencode=arch=compute_${_arch},code=sm_${_arch})
  endforeach()
  list(GET _gpucheck_archs 0 _ptx_arch)
  list(APPEND _gencode -gencode=arch=compute_${_ptx_arch},code=compute_${_ptx_arch})
  add_custom_command(
    OUTPUT ${_fatbin_0}
    COMMAND ${_gpucheck_nvcc} -fatbin -no-compress -O3 -Wno-deprecated-gpu-targets ${_gencode}
            -o ${_fatbin_0} ${GPUCHECK_KERNEL_SOURCES}
    DEPENDS ${GPUCHECK_KERNEL_SOURCES} ${GPUCHECK_KERNEL_HEADERS}
    COMMENT "nvcc: gpucheck kernels for sm_${_gpucheck_archs} + compute_${_ptx_arch} PTX"
    VERBATIM)
  add_custom_target(gpucheck_kernels_fatbin DEPENDS ${_fatbin_0})
  list(APPEND GPUCHECK_KERNEL_DEPENDS gpucheck_kernels_fatbin)
  list(JOIN _gpucheck_archs "," _archs_0)
  execute_process(COMMAND ${_gpucheck_nvcc} --version OUTPUT_VARIABLE _nvcc_version)
  string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _ "${_nvcc_version}")
  set(_toolkit_0 "${CMAKE_MATCH_1}")
  # nvcc writes its own toolkit's PTX ISA: 9.0 for 13.0 (CUDA 12.x: 8.x).
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${_toolkit_0}")
  if(CMAKE_MATCH_1 GREATER_EQUAL 13)
    math(EXPR _isa_major "${CMAKE_MATCH_1} - 4")
    set(_ptx_isa_0 "${_isa_major}.${CMAKE_MATCH_2}")
  endif()
else()
  message(WARNING "gpucheck: no usable nvcc; the binary is built without GPU kernels "
                  "(the compute and stream checks will report that)")
  set(_ptx_arch 0)
endif()

# --- slots 1 and 2: older toolkits through NVRTC ------------------------------------------------
find_package(Python3 COMPONENTS Interpreter)
set(_gpucheck_fatbinary "")
if(_gpucheck_nvcc)
  get_filename_component(_nvcc_dir ${_gpucheck_nvcc} DIRECTORY)
  if(EXISTS ${_nvcc_dir}/fatbinary)
    set(_gpucheck_fatbinary ${_nvcc_dir}/fatbinary)
  endif()
endif()
set(_gpucheck_images_summary "CUDA ${_toolkit_0}")
# slot;toolkit directory;PTX ISA the PTX is lowered to
foreach(_spec "1;cuda-12.9;8.0" "2;cuda-11.8;7.4")
  list(GET _spec 0 _slot)
  list(GET _spec 1 _dirname)
  list(GET _spec 2 _isa)
  set(_root ${GPUCHECK_TOOLCHAINS_DIR}/${_dirname})
  set(_nvrtc ${_root}/nvidia/cuda_nvrtc/lib)
  set(_ptxas ${_root}/nvidia/cuda_nvcc/bin/ptxas)
  if(NOT GPUCHECK_OLD_KERNEL_IMAGES OR NOT _fatbin_0 OR NOT Python3_Interpreter_FOUND
     OR NOT _gpucheck_fatbinary OR NOT EXISTS ${_nvrtc} OR NOT EXISTS ${_ptxas})
    message(STATUS "gpucheck: no ${_dirname} kernel image (its NVRTC and ptxas are not in "
                   "${_root}; scripts/install-deps.sh installs them)")
    continue()
  endif()
  set(_tool ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/nvrtc_image.py
      --nvrtc-lib-dir ${_nvrtc} --ptxas ${_ptxas} --fatbinary ${_gpucheck_fatbinary}
      --include-dir ${CMAKE_CURRENT_SOURCE_DIR}/kernels --ptx-isa ${_isa})
  execute_process(COMMAND ${_tool} --list-archs --output - ${GPUCHECK_KERNEL_SOURCES}
                  OUTPUT_VARIABLE _listing RESULT_VARIABLE _rc ERROR_VARIABLE _err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(WARNING "gpucheck: the ${_dirname} NVRTC does not work (${_err}); no image from it")
    continue()
  endif()
  list(GET _listing 0 _toolkit_${_slot})
  list(GET _listing 1 _archs_${_slot})
  set(_ptx_isa_${_slot} ${_isa})
  set(_fatbin_${_slot} ${CMAKE_CURRENT_BINARY_DIR}/kernels/gpucheck_kernels_${_dirname}.fatbin)
  add_custom_command(
    OUTPUT ${_fatbin_${_slot}}
    COMMAND ${_tool} --output ${_fatbin_${_slot}} ${GPUCHECK_KERNEL_SOURCES}
    DEPENDS ${GPUCHECK_KERNEL_SOURCES} ${GPUCHECK_KERNEL_HEADERS}
            ${CMAKE_CURRENT_SOURCE_DIR}/cmake/nvrtc_image.py
    COMMENT "NVRTC ${_toolkit_${_slot}}: gpucheck kernels for sm_${_archs_${_slot}} + PTX ISA ${_isa}"
    VERBATIM)
  add_custom_target(gpucheck_kernels_fatbin_${_slot} DEPENDS ${_fatbin_${_slot}})
  list(APPEND GPUCHECK_KERNEL_DEPENDS gpucheck_kernels_fatbin_${_slot})
  string(APPEND _gpucheck_images_summary ", CUDA ${_toolkit_${_slot}}")
endforeach()
if(_fatbin_0)
  message(STATUS "gpucheck: kernel images: ${_gpucheck_images_summary}")
endif()

# Each image 16-byte aligned between two symbols (zero padding between images, as between the
# fatbins of separately compiled files); a final byte keeps the last end symbol inside the
# section. An absent image is empty (begin == end).
set(_asm ".section .nv_fatbin,\"a\"\n")
set(_embed_depends "")
foreach(_slot 0 1 2)
  string(APPEND _asm ".balign 16\n.globl gpucheck_fatbin_${_slot}_begin\n"
                     "gpucheck_fatbin_${_slot}_begin:\n")
  if(_fatbin_${_slot})
    string(APPEND _asm ".incbin \"${_fatbin_${_slot}}\"\n")
    list(APPEND _embed_depends ${_fatbin_${_slot}})
  endif()
  string(APPEND _asm ".globl gpucheck_fatbin_${_slot}_end\ngpucheck_fatbin_${_slot}_end:\n")
endforeach()
string(APPEND _asm ".byte 0\n.section .note.GNU-stack,\"\",@progbits\n")
file(WRITE ${_gpucheck_embed}.in "${_asm}")
configure_file(${_gpucheck_embed}.in ${_gpucheck_embed} COPYONLY)
if(_embed_depends)
  set_source_files_properties(${_gpucheck_embed} PROPERTIES OBJECT_DEPENDS "${_embed_depends}")
endif()
set(GPUCHECK_KERNEL_OBJECTS ${_gpucheck_embed})

if(_fatbin_0)
  set(_kernels_built true)
else()
  set(_kernels_built false)
endif()
file(WRITE ${_gpucheck_gen}/kernel_build.hpp.in
     "#pragma once\n// Generated by cmake/Kernels.cmake.\n#include <array>\n"
     "namespace gpucheck::kernel_build {\n"
     "inline constexpr bool k_kernels_built = ${_kernels_built};\n"
     "/// The build's nvcc (slot 0).\n"
     "inline constexpr const char* k_toolkit_release = \"${_toolkit_0}\";\n"
     "inline constexpr const char* k_sass_archs = \"${_archs_0}\";\n"
     "inline constexpr int k_ptx_arch = ${_ptx_arch};\n"
     "inline constexpr const char* k_nvcc_path = \"${_gpucheck_nvcc}\";\n"
     "/// Per image slot (0: CUDA 13 nvcc, 1: CUDA 12.9 NVRTC, 2: CUDA 11.8 NVRTC); \"\" when absent.\n"
     "inline constexpr std::array<const char*, 3> k_image_toolkits{\"${_toolkit_0}\", "
     "\"${_toolkit_1}\", \"${_toolkit_2}\"};\n"
     "inline constexpr std::array<const char*, 3> k_image_sass_archs{\"${_archs_0}\", "
     "\"${_archs_1}\", \"${_archs_2}\"};\n"
     "inline constexpr std::array<const char*, 3> k_image_ptx_isa{\"${_ptx_isa_0}\", "
     "\"${_ptx_isa_1}\", \"${_ptx_isa_2}\"};\n"
     "} // namespace gpucheck::kernel_build\n")
configure_file(${_gpucheck_gen}/kernel_build.hpp.in ${_gpucheck_gen}/kernel_build.hpp COPYONLY)
