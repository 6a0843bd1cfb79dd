# The portable release build (preset "portable", docs/building.md): Zig's clang, libc++ and
# glibc 2.28 stubs (cmake/zig/) build a gpucheck that runs on any x86_64 Linux with glibc 2.28 or
# newer (RHEL 8, Ubuntu 20.04, Debian 10 and later), links no C++ runtime dynamically (Zig links
# libc++ and its unwinder statically), and still dlopens the NVIDIA libraries through glibc.
#
# Zig searches its own libc headers only, never /usr/include, and must not: the host's glibc
# headers (2.36 here) would pull symbols newer than 2.28. The header-only dependencies that live
# in /usr/include (CLI11, fmt, nlohmann_json, toml++) are therefore given through a directory of
# links to those folders alone; fmt is used header-only (the Debian libfmt.so is built against
# libstdc++). zlib's two headers are linked the same way, and its static library
# (GPUCHECK_STATIC_ZLIB, on here) is linked in: C with no symbol newer than glibc 2.28
# (tests/portable/check_portable.py).

if(NOT CMAKE_CXX_COMPILER MATCHES "cmake/zig/c\\+\\+$")
  message(WARNING "gpucheck: GPUCHECK_PORTABLE without the Zig wrappers (cmake/zig/c++); the "
                  "binary's glibc floor is the build machine's")
endif()

set(_gpucheck_portable_inc ${CMAKE_CURRENT_BINARY_DIR}/portable-include)
file(MAKE_DIRECTORY ${_gpucheck_portable_inc})

# gpucheck_portable_includes(TARGET): give TARGET the header-only dependencies through the
# links, and keep /usr/include itself off its command line.
function(gpucheck_portable_includes target)
  foreach(_dep CLI11::CLI11 fmt::fmt-header-only nlohmann_json::nlohmann_json
               tomlplusplus::tomlplusplus)
    get_target_property(_dirs ${_dep} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(_dir IN LISTS _dirs)
      file(GLOB _entries LIST_DIRECTORIES true ${_dir}/CLI ${_dir}/fmt ${_dir}/nlohmann
           ${_dir}/toml++)
      foreach(_entry IN LISTS _entries)
        get_filename_component(_name ${_entry} NAME)
        file(CREATE_LINK ${_entry} ${_gpucheck_portable_inc}/${_name} SYMBOLIC)
      endforeach()
    endforeach()
  endforeach()
  foreach(_dir IN LISTS ZLIB_INCLUDE_DIRS)
    foreach(_header zlib.h zconf.h)
      if(EXISTS ${_dir}/${_header})
        file(CREATE_LINK ${_dir}/${_header} ${_gpucheck_portable_inc}/${_header} SYMBOLIC)
      endif()
    endforeach()
  endforeach()
  target_include_directories(${target} SYSTEM BEFORE PUBLIC ${_gpucheck_portable_inc})
endfunction()

# CMake drops include directories the compiler searches anyway; saying /usr/include is one keeps
# the imported targets from adding it (Zig does not search it, and the links above stand in).
list(APPEND CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
list(APPEND CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
