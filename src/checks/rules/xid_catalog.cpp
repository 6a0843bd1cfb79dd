#include "checks/rules/xid_catalog.hpp"

#include <algorithm>

namespace gpucheck::checks {

namespace {

// From NVIDIA's Xid catalogue (https://docs.nvidia.com/deploy/xid-errors/, "Analyzing Xid
// Errors with the Xid Catalog"): the mnemonic and description columns, and the immediate
// resolution bucket (RESTART_APP, RESET_GPU, RESTART_BM, ...) turned into an action. Sorted.
constexpr XidInfo k_xids[] = {
    {8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing (channel timeout)",
     "restart the application; on a GPU that drives a display this is the display watchdog "
     "killing a long kernel (run compute on a GPU without a display)",
     XidClass::application},
    {13, "ROBUST_CHANNEL_GR_EXCEPTION",
     "graphics engine exception: usually an application "
     "bug such as an out-of-bounds access or illegal instruction",
     "restart the application and run it under compute-sanitizer (memcheck) or cuda-gdb; only "
     "if it recurs with correct code suspect the driver or hardware",
     XidClass::application},
    {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
     "GPU memory page fault: an illegal address accessed by a program (MMU fault)",
     "restart the application and run it under compute-sanitizer (memcheck) or cuda-gdb; "
     "typically an application bug",
     XidClass::application},
    {32, "ROBUST_CHANNEL_PBDMA_ERROR",
     "invalid or corrupted push buffer stream (DMA controller "
     "fault, mostly PCIe signal quality)",
     "restart the application; if it recurs check the PCIe link (reseat the card, riser, BIOS) "
     "and the kernel log for PCIe AER errors",
     XidClass::hardware},
    {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
     "GPU stopped processing: a program hit a software fault and was terminated; the GPU is "
     "healthy",
     "nothing to do for the GPU; look at the application that failed", XidClass::application},
    {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
     "preemptive cleanup: the driver tore down a program's work (Ctrl-C, kill, a GPU reset, or "
     "after another error)",
     "nothing to do when alone; when it follows another Xid, act on that one",
     XidClass::application},
    {48, "ROBUST_CHANNEL_GPU_ECC_DBE", "double-bit (uncorrectable) ECC memory error",
     "drain the GPU and reset it (nvidia-smi -r) or reboot to clear it; check nvidia-smi -q -d "
     "ECC,ROW_REMAPPER; if it recurs ask the vendor for an RMA",
     XidClass::fatal},
    {61, "PMU_BREAKPOINT", "internal micro-controller breakpoint or warning",
     "reset the GPU (nvidia-smi -r) or reboot; update the driver; contact support if it recurs",
     XidClass::hardware},
    {62, "PMU_HALT_ERROR", "internal micro-controller halt",
     "reset the GPU (nvidia-smi -r) or reboot; contact support if it recurs", XidClass::hardware},
    {63, "INFOROM_DRAM_RETIREMENT_EVENT",
     "ECC page retirement or row remapping recorded (the GPU handled memory errors)",
     "reset the GPU when convenient so a pending row remap takes effect; watch how often it "
     "comes back (nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT)",
     XidClass::hardware},
    {64, "INFOROM_DRAM_RETIREMENT_FAILURE",
     "ECC page retirement or row remapping failed: memory errors could not be repaired",
     "drain the GPU and reset it; if it recurs the memory is failing: ask the vendor for an RMA",
     XidClass::fatal},
    {68, "ROBUST_CHANNEL_NVDEC0_ERROR", "video decoder (NVDEC) exception",
     "restart the application; contact support if it recurs", XidClass::application},
    {69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "graphics engine class error",
     "restart the application; check the application and CUDA version", XidClass::application},
    {74, "NVLINK_ERROR", "NVLink error on a link to another GPU or NVSwitch",
     "reset the GPU or reboot to clear it; check nvidia-smi nvlink -s / -e; the fault may be at "
     "the other end of the link; if it recurs after a reboot ask the vendor for support",
     XidClass::hardware},
    {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
     "GPU has fallen off the bus: the driver cannot reach it over PCIe",
     "drain and reboot the node; check power delivery, cooling, the riser and slot, and the "
     "kernel log's PCIe errors; reseat the GPU; if it repeats ask the vendor for an RMA",
     XidClass::fatal},
    {92, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit (corrected) ECC error rate",
     "watch the GPU's ECC counters (nvidia-smi -q -d ECC); a rising rate predicts failure: plan "
     "a reset and contact the vendor if it continues",
     XidClass::hardware},
    {94, "ROBUST_CHANNEL_CONTAINED_ERROR",
     "contained memory error: one application was affected and must be restarted",
     "restart the affected application and reset the GPU when convenient", XidClass::hardware},
    {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR",
     "uncontained memory error: every application on the GPU was affected",
     "reset the GPU (nvidia-smi -r) or reboot before running anything on it; if it recurs ask "
     "the vendor for an RMA",
     XidClass::fatal},
    {109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context switch timeout",
     "reset the GPU or reboot; contact support if it recurs", XidClass::hardware},
    {119, "GSP_RPC_TIMEOUT", "GSP firmware did not answer the driver in time",
     "reset the GPU or power-cycle the node if it persists; update the driver; follow NVIDIA's "
     "GPU debug guidelines if it recurs after a power cycle",
     XidClass::hardware},
    {120, "GSP_ERROR", "error in the GSP firmware running on the GPU",
     "reset the GPU or power-cycle the node if it persists; update the driver; follow NVIDIA's "
     "GPU debug guidelines if it recurs after a power cycle",
     XidClass::hardware},
    {137, "NVLINK_PRIV_ERR", "NVLink privilege error: an illegal peer-to-peer access",
     "restart the application and run it under compute-sanitizer; typically an application bug",
     XidClass::application},
    {140, "UNRECOVERABLE_ECC_ERROR_ESCAPE",
     "unrecovered ECC error: uncorrectable memory errors the driver could not retire or remap",
     "reset the GPU; if it recurs ask the vendor for support", XidClass::fatal},
    {143, "GPU_INIT_ERROR", "GPU initialisation error",
     "reset the GPU or reboot; contact support if it recurs", XidClass::fatal},
    {144, "NVLINK_SAW_ERROR", "NVLink (NVLink 5) SAW error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {145, "NVLINK_RLW_ERROR", "NVLink (NVLink 5) RLW error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {146, "NVLINK_TLW_ERROR", "NVLink (NVLink 5) TLW error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {147, "NVLINK_TREX_ERROR", "NVLink (NVLink 5) TREX error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {148, "NVLINK_NVLPW_CTRL_ERROR", "NVLink (NVLink 5) NVLPW_CTRL error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {149, "NVLINK_NETIR_ERROR", "NVLink (NVLink 5) NETIR error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {150, "NVLINK_MSE_ERROR", "NVLink (NVLink 5) MSE error",
     "follow NVIDIA's NVLink 5 error workflow: a fatal one needs a GPU reset; check the Xid 154 "
     "recovery action logged with it",
     XidClass::hardware},
    {154, "GPU_RECOVERY_ACTION_CHANGED",
     "GPU recovery action changed: the driver says what another Xid requires (drain, GPU reset, "
     "node reboot)",
     "do what the logged line says (\"... to 0x2 (Node Reboot Required)\"): drain P2P, reset "
     "the GPU or reboot the node",
     XidClass::hardware},
};

} // namespace

std::span<const XidInfo> xid_catalog() {
  return k_xids;
}

const XidInfo* find_xid(int xid) {
  const auto it = std::lower_bound(std::begin(k_xids), std::end(k_xids), xid,
                                   [](const XidInfo& info, int value) { return info.xid < value; });
  return it != std::end(k_xids) && it->xid == xid ? &*it : nullptr;
}

} // namespace gpucheck::checks
