#pragma once
/// What a redacted report must not name beyond its snapshot, read while probing (the cli only
/// hands it to render's Redactor).

#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/redaction_hints.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// Names of the people on this machine: $USER, $LOGNAME, $SUDO_USER, the last part of a $HOME
/// under /home or /Users, and login users (uid 1000-60000) in the sysroot's /etc/passwd; and the
/// host name (gethostname) when the sysroot is "/".
RedactionHints collect_redaction_hints(const Sysroot& sysroot, const Environment& environment);

/// The login users' names in /etc/passwd text: uid from 1000 up to 60000 (not nobody).
std::vector<std::string> login_names_from_passwd(std::string_view passwd);

} // namespace gpucheck::probes
