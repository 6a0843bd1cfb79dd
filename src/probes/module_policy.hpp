#pragma once
/// Parsers for what decides whether the kernel may load the NVIDIA module: Secure Boot, kernel
/// lockdown and modprobe.d blacklists (failures.md F05, F20, F42).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::probes {

/// The SecureBoot EFI variable as efivarfs serves it: 4 attribute bytes, then one data byte
/// (1 = enabled). nullopt when shorter than 5 bytes or the data byte is neither 0 nor 1.
std::optional<bool> parse_secure_boot_efivar(std::string_view bytes);

/// The selected mode in /sys/kernel/security/lockdown ("none [integrity] confidentiality" ->
/// "integrity"); empty when no mode is bracketed.
std::string parse_lockdown(std::string_view text);

/// Lines of a modprobe.d file that stop an NVIDIA module from loading: "blacklist nvidia*" and
/// "install nvidia* /bin/false" (or /bin/true), comments and other modules skipped; trimmed.
std::vector<std::string> parse_modprobe_blacklist(std::string_view text);

} // namespace gpucheck::probes
