#pragma once
/// Identifiers a redacted report must not show that its snapshot does not name: learnt while
/// probing a live machine (probes/redaction_hints.hpp), used by render's Redactor.

#include <string>
#include <vector>

namespace gpucheck {

struct RedactionHints {
  /// $USER, $LOGNAME, $SUDO_USER, the last part of a $HOME under /home or /Users, passwd's
  /// login users
  std::vector<std::string> user_names;
  std::vector<std::string> host_names; ///< e.g. gethostname() when it differs from the snapshot's
};

} // namespace gpucheck
