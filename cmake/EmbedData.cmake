# Embeds the compatibility data (data/compat/matrix.json and its schema) in the binary.
#
# A generated C++ file pulls each JSON file in with the assembler's .incbin, so the data is
# read-only bytes in .rodata with no code generation step at build time. OBJECT_DEPENDS makes an
# edit of the JSON rebuild that one object. Sets GPUCHECK_EMBED_SOURCES.

set(GPUCHECK_EMBED_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(GPUCHECK_MATRIX_JSON ${CMAKE_CURRENT_SOURCE_DIR}/data/compat/matrix.json)
set(GPUCHECK_MATRIX_SCHEMA_JSON ${CMAKE_CURRENT_SOURCE_DIR}/data/compat/matrix.schema.json)

configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/embedded_data.cpp.in
               ${GPUCHECK_EMBED_DIR}/embedded_data.cpp @ONLY)
set_source_files_properties(${GPUCHECK_EMBED_DIR}/embedded_data.cpp PROPERTIES
  OBJECT_DEPENDS "${GPUCHECK_MATRIX_JSON};${GPUCHECK_MATRIX_SCHEMA_JSON}"
  SKIP_PRECOMPILE_HEADERS ON)
set(GPUCHECK_EMBED_SOURCES ${GPUCHECK_EMBED_DIR}/embedded_data.cpp)
