// The compatibility data (`--matrix FILE`, src/compat/matrix.cpp): parsed and validated in the
// parent. Any bytes: a Matrix or an Error, never an exception or a crash; a matrix that is
// accepted then judges a recorded machine and every renderer writes the report.
#include "compat/matrix.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpucheck::Expected<gpucheck::compat::Matrix> matrix =
      gpucheck::compat::parse_matrix(gpucheck::fuzz::as_text(data, size), "fuzz");
  if (matrix) {
    gpucheck::compat::use_matrix(std::move(matrix).value());
    gpucheck::fuzz::exercise_report(gpucheck::fuzz::recorded_snapshot());
  }
  return 0;
}
