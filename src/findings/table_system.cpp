#include "findings/tables.hpp"

namespace gpucheck {

// Findings shared by several parts of gpucheck (the root causes, the probe-failure rules and the
// checks that report them); a code used by one check is spelt in that check's file. Sorted by code;
// message and remedy share the positional arguments, and where(...) says what each stands for.
// Every placeholder is indexed
// ({0}, {1}).
namespace {
// What recurring arguments stand for (FindingSpec::placeholders).
constexpr std::string_view k_probe = "the probe (\"NVML probe (nvmlInit_v2, nvmlDeviceGet*)\")";

constexpr FindingSpec k_table[] = {
    {codes::k_driver_missing, Severity::fail, "NVIDIA driver not installed",
     "No NVIDIA kernel module is loaded and no driver library could be found.",
     "no NVIDIA driver: /proc/driver/nvidia/version is absent and libcuda.so.1 cannot be loaded "
     "({0}); {1}",
     "{2}",
     where("why libcuda.so.1 could not be loaded (the loader's error)",
           "the NVIDIA GPUs on the PCI bus, or that there is none",
           "what to do here: nothing where no GPU is on the bus; the host's driver and --gpus all "
           "in a container; Windows' driver under WSL2; else the driver branch for each GPU on the "
           "bus (from the matrix) and this distribution's way (apt, dnf, zypper, from "
           "os-release)")},
    {codes::k_driver_module_not_loaded, Severity::fail, "Kernel module not loaded",
     "The NVIDIA user-space libraries are installed but the kernel module is not loaded: usually "
     "DKMS did not rebuild it for a new kernel, or Secure Boot refused the unsigned module.",
     "the NVIDIA user-space driver is installed ({0}) but the nvidia kernel module is not loaded "
     "(no /proc/driver/nvidia/version); {1}",
     "rebuild the module for kernel {2} ({3}, or reinstall the driver package), check Secure Boot "
     "(mokutil --sb-state: sign "
     "the module or enrol the MOK key), then sudo modprobe nvidia or reboot",
     where("the driver libraries found (name -> path)",
           "the NVIDIA GPUs on the PCI bus, or that there is none", "the running kernel's release",
           "the headers and the rebuild for this distribution (apt: linux-headers-<release>; dnf: "
           "kernel-devel-<release>; zypper: kernel-default-devel; then sudo dkms autoinstall)"),
     Drain::yes},
    {codes::k_driver_version_mismatch, Severity::fail, "Driver/library version mismatch",
     "The user-space driver libraries come from a different driver version than the loaded "
     "kernel module, typically after a package upgrade without reboot.",
     "the loaded kernel module is {0} but the user-space driver is {1} ({2})",
     "reboot, or stop all GPU processes and reload the module (sudo rmmod nvidia_uvm nvidia_drm "
     "nvidia_modeset nvidia && sudo modprobe nvidia); hold the driver packages ({3}) so "
     "unattended upgrades do not repeat it",
     where("version of the loaded kernel module", "the user-space driver version(s) that differ",
           "where those versions were read (libraries, NVML)",
           "how this distribution holds packages (apt-mark hold, dnf versionlock, zypper addlock)"),
     Drain::yes},
    {codes::k_env_device_node_missing, Severity::fail, "GPU device node missing",
     "A /dev/nvidia* node that CUDA opens does not exist: not created (no nvidia-modprobe, UVM "
     "module not loaded) or not passed into the container.",
     "{0} does not exist{1}",
     "create the nodes: sudo nvidia-modprobe -c=0 -u (or sudo modprobe nvidia_uvm for "
     "/dev/nvidia-uvm); in a container pass them with --gpus all or --device {0}",
     where("path of the device node (\"/dev/nvidia-uvm\")", "why it is expected, or empty")},
    {codes::k_env_device_node_no_access, Severity::fail, "GPU device node not accessible",
     "A /dev/nvidia* node exists but this user may not open it for reading and writing.",
     "{0} exists but this user cannot open it for {1} (mode {2})",
     "add the user to the group that owns {0} (ls -l {0}; often video or render: sudo usermod "
     "-aG video $USER, then log in again); in a container check the device cgroup (--gpus, "
     "--device {0})",
     where("path of the device node", "what this user may not do (reading, writing, or both)",
           "its permission bits (\"0660\")")},
    {codes::k_env_nouveau_bound, Severity::fail, "nouveau drives the GPU",
     "The open-source nouveau driver owns the GPU, so the NVIDIA driver cannot bind it.",
     "the nouveau driver is bound to NVIDIA device {0}",
     "blacklist nouveau (write 'blacklist nouveau' and 'options nouveau modeset=0' to "
     "/etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs (sudo update-initramfs -u, "
     "or sudo dracut -f), and reboot",
     where("the NVIDIA devices nouveau drives (PCI addresses)"), Drain::yes},
    {codes::k_env_nvidia_visible_devices_none, Severity::fail, "Container started without GPUs",
     "NVIDIA_VISIBLE_DEVICES=void/none tells the container runtime to inject no GPU.",
     "NVIDIA_VISIBLE_DEVICES={0}: the container runtime gives this {1} container no GPU",
     "start the container with --gpus all (or NVIDIA_VISIBLE_DEVICES=all, or a list of GPU "
     "indices/UUIDs)",
     where("the value of NVIDIA_VISIBLE_DEVICES", k_where_container)},
    {codes::k_env_visible_devices_hides_all, Severity::fail, "CUDA_VISIBLE_DEVICES hides every GPU",
     "CUDA_VISIBLE_DEVICES is set to a value that makes CUDA enumerate no device.",
     "CUDA_VISIBLE_DEVICES=\"{0}\" hides every GPU from CUDA ({1})",
     "unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use, e.g. CUDA_VISIBLE_DEVICES={2}",
     where("the value of CUDA_VISIBLE_DEVICES", "why it selects no GPU",
           "the GPU indices NVML sees, as a value to use")},
    {codes::k_env_visible_devices_no_match, Severity::fail,
     "CUDA_VISIBLE_DEVICES names no existing GPU",
     "The first entry of CUDA_VISIBLE_DEVICES is not a GPU of this machine, and CUDA stops at "
     "the first invalid entry, so no device is visible.",
     "CUDA_VISIBLE_DEVICES=\"{0}\" selects no GPU: '{1}' is invalid ({2})",
     "use indices or UUIDs of this machine's GPUs: {3}",
     where("the value of CUDA_VISIBLE_DEVICES", "the first invalid entry", "why it is invalid",
           "the GPUs NVML sees (index = UUID (name))")},
    {codes::k_env_wsl_file_missing, Severity::fail, "WSL2 GPU file missing",
     "Under WSL2 the Windows NVIDIA driver exposes the GPU through /dev/dxg and provides "
     "libcuda.so.1 and libnvidia-ml.so.1 in /usr/lib/wsl/lib; without them CUDA cannot start.",
     "{0} does not exist under WSL2",
     "install or update the NVIDIA driver on the Windows side (it provides /usr/lib/wsl/lib and "
     "/dev/dxg), run wsl --update and wsl --shutdown in Windows, and check that this "
     "distribution runs as WSL 2 (wsl -l -v), not WSL 1",
     where("path of the missing file (\"/dev/dxg\", a library in /usr/lib/wsl/lib)")},
    {codes::k_env_wsl_linux_driver_library, Severity::fail, "Linux driver library inside WSL2",
     "Under WSL2 the GPU is served by the Windows driver through /dev/dxg and its libraries in "
     "/usr/lib/wsl/lib; a Linux libcuda or NVML (from a Linux driver installed inside WSL) "
     "expects /dev/nvidia* and a kernel module that do not exist there, and shadows the working "
     "one.",
     "the loader picks a Linux driver library instead of the Windows driver's in "
     "/usr/lib/wsl/lib: {0}",
     "remove the Linux driver inside WSL (sudo apt remove --purge 'nvidia-driver-*' "
     "'libnvidia-compute-*' cuda-drivers, or delete the file named) and run sudo ldconfig, so "
     "/usr/lib/wsl/lib is used; never install a Linux NVIDIA driver inside WSL 2",
     where("the Linux driver library the loader picks outside /usr/lib/wsl (library -> file)")},
    {codes::k_env_wsl_linux_driver_package, Severity::fail,
     "Linux NVIDIA driver package inside WSL2",
     "A Linux NVIDIA driver package is installed inside WSL2, where the Windows driver serves "
     "the GPU; its libraries shadow /usr/lib/wsl/lib and break CUDA (NVIDIA's CUDA on WSL user "
     "guide).",
     "Linux NVIDIA driver packages installed inside WSL2: {0}",
     "sudo apt remove --purge {0}, then sudo ldconfig; keep only the Windows driver (and, for "
     "the toolkit, cuda-toolkit-X-Y)",
     where("the Linux NVIDIA driver packages installed")},
    {codes::k_gpu_lost, Severity::fail, "GPU lost (fell off the bus)",
     "NVML counts the GPU but cannot reach it (NVML_ERROR_GPU_IS_LOST), or CUDA cannot open it "
     "(CUDA_ERROR_DEVICE_UNAVAILABLE outside an exclusive compute mode, or any error once the "
     "kernel log has it falling off the bus): it stopped answering on the PCIe bus (Xid 79), "
     "usually from power delivery, overheating, a bad riser or slot, or firmware.",
     "GPU {0} at {1} is lost: {2}",
     "drain the node and reboot it (a reset does not bring a lost GPU back); if it is lost "
     "again, power off and reseat the GPU at {1}, check its power cables, PSU and cooling, and "
     "update the SBIOS and driver; if it repeats, ask the vendor for an RMA",
     where("the GPU's index (NVML's)", "its PCI address",
           "the evidence (NVML's or CUDA's error, its UUID, PCI config space, kernel log, CUDA's "
           "count)"),
     Drain::yes},
    {codes::k_gpu_reset_required, Severity::fail, "GPU needs a reset",
     "NVML counts the GPU but will not use it until it is reset (NVML_ERROR_RESET_REQUIRED), "
     "typically after an uncorrectable error or a pending row remap.",
     "GPU {0} at {1} needs a reset: {2}",
     "stop the processes on it and reset it (sudo nvidia-smi -r -i {1}) or reboot; if it needs "
     "resets again, ask the vendor for an RMA",
     where("NVML's GPU index", "its PCI address",
           "the evidence (NVML's error, PCI config space, kernel log, CUDA's count)"),
     Drain::yes},
    {codes::k_probe_crashed, Severity::error, "Probe crashed",
     "A probe runs each NVIDIA library call in a child process; this one was killed by a signal "
     "inside the library, so its facts are missing.",
     "the {0} crashed with {1}; stderr: {2}",
     "the crash is inside the NVIDIA library the {0} loads: reinstall that library or the driver; "
     "if it persists, report it with the saved snapshot",
     where(k_probe, "the signal (\"SIGSEGV\")", k_where_stderr)},
    {codes::k_probe_failed, Severity::error, "Probe failed",
     "A probe's child process ended without delivering its facts.",
     "the {0} ended without a result ({1}); stderr: {2}",
     "rerun gpucheck; if it repeats, report it with the saved snapshot",
     where(k_probe, "how it ended (exit status, unreadable output)", k_where_stderr)},
    {codes::k_probe_timed_out, Severity::error, "Probe hung",
     "A probe's child process did not finish in time and was killed: a driver call hung.",
     "the {0} did not finish within {1} s and was killed; stderr: {2}",
     "a hung driver call usually means a GPU in a bad state: read driver.kernel_log's Xid "
     "findings, stop stuck GPU processes, reset the GPU or reboot",
     where(k_probe, "its time limit in seconds", k_where_stderr)},
};
} // namespace

std::span<const FindingSpec> findings_system() {
  return k_table;
}

} // namespace gpucheck
