#pragma once
/// NVIDIA's Xid numbers (the driver's error reports in the kernel log) with their meaning, the
/// action NVIDIA recommends, and how gpucheck weighs them. Sourced data: NVIDIA's Xid catalogue,
/// https://docs.nvidia.com/deploy/xid-errors/ (analyzing-xid-catalog.html: mnemonic,
/// description, resolution buckets), in gpucheck's own words.

#include <span>
#include <string_view>

namespace gpucheck::checks {

/// How an Xid is weighed. application: the program that ran caused it, the GPU is fine (a
/// note); hardware: the GPU or its link had an error that needs attention, a reset or a watch
/// (a warning); fatal: the GPU is unusable or its memory lost data until a reset or reboot, and
/// a repeat means failing hardware (a failure).
enum class XidClass { application, hardware, fatal };

struct XidInfo {
  int xid = 0;
  std::string_view mnemonic; ///< "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
  std::string_view meaning;  ///< plain words
  std::string_view action;   ///< what NVIDIA recommends, in plain words
  XidClass weight = XidClass::hardware;
};

/// Every Xid gpucheck knows, sorted by number.
std::span<const XidInfo> xid_catalog();

/// The entry for an Xid, or nullptr for one gpucheck does not know.
const XidInfo* find_xid(int xid);

/// NVIDIA's Xid catalogue, for remedies.
inline constexpr std::string_view k_xid_catalogue_url =
    "https://docs.nvidia.com/deploy/xid-errors/";

} // namespace gpucheck::checks
