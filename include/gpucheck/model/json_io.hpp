#pragma once
/// JSON conversion of the model. Keys are emitted in sorted order (nlohmann::json uses std::map),
/// enums as their to_string spelling, absent optionals as null.

#include <nlohmann/json_fwd.hpp>

#include "gpucheck/expected.hpp"
#include "gpucheck/model/report.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck {

void to_json(nlohmann::json& j, Status v);
void from_json(const nlohmann::json& j, Status& v);
void to_json(nlohmann::json& j, Severity v);
void to_json(nlohmann::json& j, ChildFailureKind v);
void from_json(const nlohmann::json& j, ChildFailureKind& v);
void from_json(const nlohmann::json& j, Severity& v);

#define GPUCHECK_DECLARE_JSON(T)                                                                   \
  void to_json(nlohmann::json& j, const T& v);                                                     \
  void from_json(const nlohmann::json& j, T& v);

GPUCHECK_DECLARE_JSON(ChildFailure)
GPUCHECK_DECLARE_JSON(LibraryLoad)
GPUCHECK_DECLARE_JSON(DeviceNode)
GPUCHECK_DECLARE_JSON(PciDevice)
GPUCHECK_DECLARE_JSON(KernelModuleInfo)
GPUCHECK_DECLARE_JSON(NvmlHandleFailure)
GPUCHECK_DECLARE_JSON(NvmlInfo)
GPUCHECK_DECLARE_JSON(CudaDevice)
GPUCHECK_DECLARE_JSON(CudaDriverInfo)
GPUCHECK_DECLARE_JSON(GpuProcess)
GPUCHECK_DECLARE_JSON(NvLinkInfo)
GPUCHECK_DECLARE_JSON(GpuFabricInfo)
GPUCHECK_DECLARE_JSON(GpuPath)
GPUCHECK_DECLARE_JSON(GpuInfo)
GPUCHECK_DECLARE_JSON(LibraryCopy)
GPUCHECK_DECLARE_JSON(CudnnSublibrary)
GPUCHECK_DECLARE_JSON(CudnnDetails)
GPUCHECK_DECLARE_JSON(LibraryFamily)
GPUCHECK_DECLARE_JSON(ToolkitInstall)
GPUCHECK_DECLARE_JSON(ToolkitInfo)
GPUCHECK_DECLARE_JSON(ContainerInfo)
GPUCHECK_DECLARE_JSON(WslFile)
GPUCHECK_DECLARE_JSON(WslInfo)
GPUCHECK_DECLARE_JSON(ShmInfo)
GPUCHECK_DECLARE_JSON(EnvironmentInfo)
GPUCHECK_DECLARE_JSON(HostInfo)
GPUCHECK_DECLARE_JSON(ProbeIssue)
GPUCHECK_DECLARE_JSON(KernelLogEvent)
GPUCHECK_DECLARE_JSON(KernelLogInfo)
GPUCHECK_DECLARE_JSON(SystemSnapshot)
GPUCHECK_DECLARE_JSON(Finding)
GPUCHECK_DECLARE_JSON(Metric)
GPUCHECK_DECLARE_JSON(CheckResult)
GPUCHECK_DECLARE_JSON(ReportContext)
GPUCHECK_DECLARE_JSON(ReportSummary)
GPUCHECK_DECLARE_JSON(ResultRef)
GPUCHECK_DECLARE_JSON(RootCause)
GPUCHECK_DECLARE_JSON(Report)

#undef GPUCHECK_DECLARE_JSON

/// Parse a snapshot file's text; the error names the place and the problem.
Expected<SystemSnapshot> snapshot_from_text(const std::string& text);

} // namespace gpucheck
