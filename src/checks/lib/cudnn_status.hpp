#pragma once
/// cuDNN's return codes by name and number.

#include <string>

namespace gpucheck::checks {

/// "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002)"; "status 77" for a code neither cuDNN 8 nor
/// 9 defines.
std::string cudnn_status_text(int status);

} // namespace gpucheck::checks
