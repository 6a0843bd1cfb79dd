#include "findings/tables.hpp"

namespace gpucheck {

// Findings of the passive checks (src/checks/; the per-GPU health checks of src/checks/gpu/ and
// env.shm spell their own in their files). Sorted by code; message and remedy share the
// positional arguments, and where(...) says what each stands for. Every placeholder is indexed
// ({0}, {1}).
namespace {
// What recurring arguments stand for (FindingSpec::placeholders).
constexpr std::string_view k_container = "the container runtime (docker, podman, kubernetes, ...)";
constexpr std::string_view k_device = "the device: \"GPU 1 (0000:3b:00.0)\", or its PCI address";
constexpr std::string_view k_log_line = "the last such line of the kernel log";
constexpr std::string_view k_probe = "the probe (\"NVML probe (nvmlInit_v2, nvmlDeviceGet*)\")";
constexpr std::string_view k_stderr = "the end of its stderr";
constexpr std::string_view k_when = "how often since boot, and how long ago the last time";

constexpr FindingSpec k_table[] = {
    {codes::k_cuda_compat_unsupported, Severity::fail,
     "Forward compatibility not supported on this GPU",
     "A CUDA forward-compatibility libcuda (cuda-compat package) is loaded, but forward "
     "compatibility works only on data-center GPUs; on other GPUs cuInit returns 804.",
     "cuInit returned CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804): the forward-compatibility "
     "libcuda {0} is loaded and this GPU does not support it",
     "remove {1} from LD_LIBRARY_PATH (or uninstall the cuda-compat package) so the system "
     "driver's libcuda.so.1 is used, and upgrade the system driver if a newer CUDA is needed",
     where("path of the forward-compatibility libcuda loaded",
           "its compat directory, to take out of the library path")},
    {codes::k_cuda_devices_unavailable, Severity::fail, "All CUDA devices busy or unavailable",
     "cuInit found GPUs but none can be used: compute mode Exclusive_Process with another process "
     "on the GPU, or Prohibited.",
     "cuInit returned CUDA_ERROR_DEVICES_UNAVAILABLE (46): every GPU is busy or unavailable{0}",
     "check the compute mode (nvidia-smi -q -d COMPUTE); set it back with "
     "sudo nvidia-smi -c DEFAULT, or stop the process that holds the GPU",
     where("\" (GPU N is exclusive_process, ...)\": the GPUs not in the default compute mode, or "
           "empty")},
    {codes::k_cuda_init_failed, Severity::fail, "cuInit failed",
     "The CUDA driver API could not initialise; the code names the reason.",
     "cuInit returned {0} ({1}): {2}",
     "look up {0} in the CUDA driver API documentation; read driver.kernel_log's decoded Xid "
     "and NVRM errors of this boot (gpucheck reads the kernel log when this user may) and rerun",
     where("the CUresult name cuInit returned", "its number", "the driver's description of it")},
    {codes::k_cuda_insufficient_driver, Severity::fail, "Driver too old for this libcuda",
     "The CUDA driver reports that it is too old for the CUDA version requested.",
     "cuInit returned CUDA_ERROR_INSUFFICIENT_DRIVER (35); the driver supports CUDA {0}",
     "install a newer NVIDIA driver (one that supports the CUDA version your applications are "
     "built for), or use builds made for CUDA {0}",
     where("newest CUDA version the driver supports")},
    {codes::k_cuda_library_missing, Severity::fail, "libcuda.so.1 not loadable",
     "The kernel module is loaded but the driver's CUDA library cannot be loaded, so no CUDA "
     "program can start (cudart then reports error 35, insufficient driver).",
     "libcuda.so.1 cannot be loaded ({0}) although the kernel module {1} is loaded",
     "install the driver's CUDA library for branch {2}: {3}; in a container, start it with "
     "--gpus all and NVIDIA_DRIVER_CAPABILITIES containing compute",
     where("why libcuda.so.1 could not be loaded (the loader's error)",
           "version of the loaded kernel module", "the driver branch (\"580\")",
           "the command for this distribution (apt: sudo apt install libnvidia-compute-580; dnf: "
           "sudo dnf install nvidia-driver-cuda-libs; else where NVIDIA's guide lists it)")},
    {codes::k_cuda_no_device, Severity::fail, "CUDA finds no device",
     "cuInit ran but found no CUDA device: none installed, none visible, or none usable.",
     "cuInit returned CUDA_ERROR_NO_DEVICE (100); {0}",
     "check CUDA_VISIBLE_DEVICES (unset it to see every GPU), MIG instances (nvidia-smi mig -lgi) "
     "and, in a container, that it was started with --gpus",
     where("what NVML sees, CUDA_VISIBLE_DEVICES and MIG GPUs without instances")},
    {codes::k_cuda_no_visible_device, Severity::fail, "CUDA sees no device while NVML sees GPUs",
     "cuInit succeeded but reports zero devices while NVML lists GPUs: the GPUs are hidden by "
     "CUDA_VISIBLE_DEVICES or are MIG-enabled without instances.",
     "cuInit succeeded but CUDA sees 0 devices; {0}",
     "unset CUDA_VISIBLE_DEVICES or point it at existing GPUs; create MIG instances on "
     "MIG-enabled GPUs",
     where("what NVML sees, CUDA_VISIBLE_DEVICES and MIG GPUs without instances")},
    {codes::k_cuda_stub_library, Severity::fail, "Stub libcuda loaded",
     "The loader picked the CUDA toolkit's link-time stub libcuda, which only exists to link "
     "against; at run time it makes cuInit return 34.",
     "the libcuda loaded is the toolkit's stub {0} (cuInit: {1})",
     "remove {2} from LD_LIBRARY_PATH (and from /etc/ld.so.conf.d) so the driver's libcuda.so.1 "
     "is found; never install a libcuda.so.1 that points into stubs/",
     where("path of the stub libcuda loaded", "what cuInit returned",
           "the stubs directory, to take out of the library path")},
    {codes::k_cuda_system_driver_mismatch, Severity::fail,
     "libcuda does not match the kernel module",
     "libcuda belongs to a different driver version than the loaded kernel module (usually a "
     "driver upgrade without reboot).",
     "cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): libcuda {0} ({1}) does not match "
     "the kernel module {2}",
     "reboot, or stop all GPU processes and reload the module (sudo rmmod nvidia_uvm nvidia_drm "
     "nvidia_modeset nvidia && sudo modprobe nvidia); if {1} comes from another driver "
     "installation, remove it",
     where("version of the libcuda loaded (from its file name)", "path of that libcuda",
           "version of the loaded kernel module"),
     Drain::yes},
    {codes::k_cuda_system_not_ready, Severity::fail, "System not ready (Fabric Manager)",
     "On NVSwitch systems CUDA waits for the Fabric Manager; error 802 means it is not running "
     "or does not match the driver.",
     "cuInit returned CUDA_ERROR_SYSTEM_NOT_READY (802) with driver {0}",
     "install and start the Fabric Manager of exactly driver version {0} "
     "(sudo systemctl enable --now nvidia-fabricmanager) and check its log",
     where("driver version (kernel module, else NVML)"), Drain::yes},
    {codes::k_cuda_unknown_error, Severity::fail, "cuInit unknown error (999)",
     "cuInit failed with CUDA_ERROR_UNKNOWN: most often the nvidia_uvm module is in a bad state "
     "after suspend/resume, not loaded, or /dev/nvidia-uvm is missing.",
     "cuInit returned CUDA_ERROR_UNKNOWN (999){0}",
     "stop GPU processes and reload the UVM module (sudo rmmod nvidia_uvm && sudo modprobe "
     "nvidia_uvm) or reboot; make sure /dev/nvidia-uvm exists (sudo nvidia-modprobe -u -c=0); "
     "after suspend/resume enable nvidia-suspend/nvidia-resume services",
     where("\"; the nvidia_uvm module is not loaded\", \"; /dev/nvidia-uvm does not exist\", or "
           "empty"),
     Drain::yes},
    {codes::k_driver_gpu_other_driver, Severity::warn, "GPU bound to another driver",
     "An NVIDIA PCI device is bound to a driver other than nvidia (vfio-pci reserves it for a "
     "virtual machine).",
     "NVIDIA PCI device {0} ({1}) is bound to {2}, not to nvidia",
     "if this host should use the GPU, unbind it from {2} (e.g. sudo driverctl unset-override {0}) "
     "and reload the nvidia module",
     where("the device's PCI address", "its PCI device id",
           "the driver bound to it (vfio-pci, ...)")},
    {codes::k_driver_gpu_unbound, Severity::fail, "GPU without driver",
     "The nvidia module is loaded but did not claim this GPU (unsupported by this driver branch "
     "or by the open/proprietary flavour, or a failed probe).",
     "NVIDIA PCI device {0} ({1}) has no kernel driver bound although driver {2} is loaded",
     "read sudo dmesg | grep -i nvrm for why the driver rejected it (a GPU too old or too new for "
     "branch {2}, an open module on a pre-Turing GPU), install a driver that supports it, then "
     "reload the module or reboot",
     where("the device's PCI address", "its PCI device id", "version of the loaded nvidia module"),
     Drain::yes},
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
    {codes::k_env_dgpu_switched_off, Severity::fail, "hybrid graphics switched the NVIDIA GPU off",
     "This machine has an integrated GPU beside the NVIDIA one (Optimus, PRIME). The "
     "distribution's PRIME profile 'intel', bbswitch or a modprobe blacklist switched the NVIDIA "
     "GPU off, so the driver does not see it: nvidia-smi says 'No devices were found' and CUDA "
     "finds no device or fails with an unknown error.",
     "{0} is switched off beside the integrated GPU {1}: {2}",
     "select the NVIDIA GPU: sudo prime-select nvidia (or on-demand, never intel) and reboot; "
     "remove NVIDIA blacklist lines from /etc/modprobe.d and rebuild the initramfs; where the "
     "BIOS offers it, choose hybrid or discrete graphics. In on-demand mode the first CUDA call "
     "waits while the GPU wakes",
     where("the NVIDIA GPU (its PCI address)", "the integrated GPU(s)",
           "what switches the NVIDIA GPU off (PRIME profile, bbswitch, blacklisted module)")},
    {codes::k_env_driver_capabilities_no_compute, Severity::warn,
     "Container lacks the compute capability",
     "The NVIDIA container runtime injects only the libraries for the capabilities requested; "
     "without compute there is no libcuda in the container.",
     "NVIDIA_DRIVER_CAPABILITIES={0} does not include compute, so the container runtime does "
     "not inject libcuda",
     "start the container with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all)",
     where("the value of NVIDIA_DRIVER_CAPABILITIES")},
    {codes::k_env_driver_capabilities_unset, Severity::info, "Container capabilities not set",
     "NVIDIA_DRIVER_CAPABILITIES is unset; the container runtime then applies its default, which "
     "some set-ups make utility only.",
     "NVIDIA_DRIVER_CAPABILITIES is not set in this {0} container",
     "if CUDA libraries are missing, start the container with "
     "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
     where(k_container)},
    {codes::k_env_nouveau_bound, Severity::fail, "nouveau drives the GPU",
     "The open-source nouveau driver owns the GPU, so the NVIDIA driver cannot bind it.",
     "the nouveau driver is bound to NVIDIA device {0}",
     "blacklist nouveau (write 'blacklist nouveau' and 'options nouveau modeset=0' to "
     "/etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs (sudo update-initramfs -u, "
     "or sudo dracut -f), and reboot",
     where("the NVIDIA devices nouveau drives (PCI addresses)"), Drain::yes},
    {codes::k_env_nouveau_loaded, Severity::warn, "nouveau module loaded",
     "The nouveau module is loaded; it can take the GPU at the next boot or module reload.",
     "the nouveau module is loaded (no NVIDIA device is bound to it now)",
     "blacklist nouveau (write 'blacklist nouveau' and 'options nouveau modeset=0' to "
     "/etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs (sudo update-initramfs -u, "
     "or sudo dracut -f), and reboot"},
    {codes::k_env_nvidia_visible_devices_none, Severity::fail, "Container started without GPUs",
     "NVIDIA_VISIBLE_DEVICES=void/none tells the container runtime to inject no GPU.",
     "NVIDIA_VISIBLE_DEVICES={0}: the container runtime gives this {1} container no GPU",
     "start the container with --gpus all (or NVIDIA_VISIBLE_DEVICES=all, or a list of GPU "
     "indices/UUIDs)",
     where("the value of NVIDIA_VISIBLE_DEVICES", k_container)},
    {codes::k_env_risky_variable, Severity::warn, "Debug or tuning variable set",
     "An environment variable meant for debugging or special set-ups changes how every CUDA "
     "program runs.",
     "{0}={1} is set: {2}",
     "unset {0} unless you are debugging (look in ~/.bashrc, the job script, the container "
     "image's ENV)",
     where("the variable's name", "its value", "what it does")},
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
    {codes::k_env_visible_devices_partly_invalid, Severity::warn,
     "CUDA_VISIBLE_DEVICES partly invalid",
     "CUDA stops reading CUDA_VISIBLE_DEVICES at the first invalid entry; later entries are "
     "silently ignored.",
     "CUDA_VISIBLE_DEVICES=\"{0}\": entry '{1}' is invalid ({2}), so CUDA ignores it and "
     "everything after it; CUDA enumerates only {3}",
     "fix or remove '{1}'; this machine's GPUs are {4}",
     where("the value of CUDA_VISIBLE_DEVICES", "the first invalid entry", "why it is invalid",
           "the GPUs CUDA still enumerates", "the GPUs NVML sees (index = UUID (name))")},
    {codes::k_env_wsl_cuda_meta_package, Severity::warn, "CUDA meta-package under WSL2",
     "Under WSL2 the CUDA toolkit must be installed alone (cuda-toolkit-X-Y); the meta-packages "
     "cuda, cuda-X-Y and cuda-runtime-X-Y depend on cuda-drivers, which tries to install a Linux "
     "NVIDIA driver inside WSL and breaks the Windows driver's libraries (NVIDIA's CUDA on WSL "
     "user guide).",
     "CUDA meta-packages installed, which pull in the Linux driver (cuda-drivers): {0}",
     "sudo apt remove --purge {0} cuda-drivers, then install the toolkit alone: sudo apt install "
     "cuda-toolkit-X-Y (from NVIDIA's wsl-ubuntu repository); the Windows driver provides the "
     "driver",
     where("the CUDA meta-packages installed")},
    {codes::k_env_wsl_file_missing, Severity::fail, "WSL2 GPU file missing",
     "Under WSL2 the Windows NVIDIA driver exposes the GPU through /dev/dxg and provides "
     "libcuda.so.1 and libnvidia-ml.so.1 in /usr/lib/wsl/lib; without them CUDA cannot start.",
     "{0} does not exist under WSL2",
     "install or update the NVIDIA driver on the Windows side (it provides /usr/lib/wsl/lib and "
     "/dev/dxg), run wsl --update and wsl --shutdown in Windows, and check that this "
     "distribution runs as WSL 2 (wsl -l -v), not WSL 1",
     where("path of the missing file (\"/dev/dxg\", a library in /usr/lib/wsl/lib)")},
    {codes::k_env_wsl_ldconfig_warning, Severity::info, "ldconfig's WSL warning is harmless",
     "WSL mounts the Windows driver's libcuda.so, libcuda.so.1 and libcuda.so.1.1 as plain "
     "files, not symbolic links, so every ldconfig run prints \"/usr/lib/wsl/lib/libcuda.so.1 is "
     "not a symbolic link\". It changes nothing.",
     "/usr/lib/wsl/lib/libcuda.so.1 is a plain file: ldconfig prints \"is not a symbolic link\" "
     "for it, which is harmless",
     "nothing to do; do not replace or delete the files in /usr/lib/wsl/lib"},
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
    {codes::k_lib_cudart_not_found, Severity::info, "No shared CUDA runtime on the loader path",
     "No libcudart is loadable by its bare name; applications usually bundle their own.",
     "no CUDA runtime is loadable by its bare name ({0})",
     "nothing to do unless a program expects the system's libcudart: then install the CUDA "
     "runtime (NVIDIA's package cuda-cudart-<major>-<minor>, named alike for apt, dnf and "
     "zypper) or add its directory to LD_LIBRARY_PATH",
     where("the loader's error")},
    {codes::k_lib_cudnn_cuda_major_mix, Severity::warn, "cuDNN copies for different CUDA majors",
     "cuDNN copies built for different CUDA major versions are installed; a program can pick the "
     "wrong one (pip nvidia-*-cu12 and -cu13 wheels in one environment).",
     "cuDNN copies built for different CUDA majors: {0}",
     "keep one CUDA major per environment: use cuDNN built for CUDA {1} and remove or isolate "
     "the others (separate virtual environments for -cu12 and -cu13 wheels)",
     where("the cuDNN copies, each with its CUDA major and path",
           "the CUDA major to keep (the runtime's, else the driver's)")},
    {codes::k_lib_cudnn_missing, Severity::warn, "cuDNN not found",
     "No cuDNN library is loadable by its bare name.", "cuDNN is not loadable ({0}){1}",
     "install cuDNN for CUDA {2}: {3}; if it is installed in a directory the loader does not "
     "search, add that directory to LD_LIBRARY_PATH",
     where("the loader's error", "\"; copies on disk: ...\" (path and origin of each), or empty",
           "the CUDA major to install cuDNN for",
           "the command for this distribution (apt: sudo apt install libcudnn9-cuda-13; else "
           "NVIDIA's repository for it), or pip install nvidia-cudnn-cu13")},
    {codes::k_lib_cudnn_older_copy_loaded, Severity::warn, "Older cuDNN copy wins",
     "Several cuDNN copies are installed and the loader picks an older one than the newest "
     "copy present.",
     "the loader picks cuDNN {0} ({1}) but a newer copy {2} is installed at {3}",
     "remove the older copy or put {4} first in LD_LIBRARY_PATH; keep one cuDNN per "
     "environment",
     where("version of the cuDNN loaded", "its path", "version of the newest copy installed",
           "that copy's path", "that copy's directory")},
    {codes::k_lib_cudnn_probe_crashed, Severity::fail, "cuDNN crashed while loading",
     "cuDNN aborts the process when a sub-library is missing or has another version, so the "
     "probe that loaded it crashed.",
     "loading cuDNN ({0}) ended with {1}; stderr: {2}",
     "make sure every libcudnn_*.so.9 sub-library sits in {3} next to the shim and comes from "
     "the same cuDNN release; reinstall cuDNN",
     where("the cuDNN library loaded (\"libcudnn.so.9\")", "how it ended (signal or status)",
           k_stderr, "the cuDNN directory")},
    {codes::k_lib_cudnn_sublibrary_failed, Severity::fail, "cuDNN sub-library broken",
     "A cuDNN sub-library is missing, cannot be loaded, or is from another cuDNN release than "
     "the shim.",
     "cuDNN sub-library {0} in {1} {2}",
     "reinstall cuDNN so every libcudnn*.so.9 in {1} comes from one release (the shim loaded is "
     "{3}); remove stray copies from other releases",
     where("the sub-library (\"libcudnn_ops.so.9\")", "its directory",
           "what is wrong (cannot be loaded, fails its version check)",
           "path of the cuDNN shim loaded")},
    {codes::k_log_fallen_off_bus, Severity::fail, "GPU fell off the bus",
     "The kernel log says the NVIDIA driver found a GPU not answering on PCIe any more: power "
     "delivery, overheating, a bad riser or slot, firmware, or a failing GPU.",
     "the kernel log says {0} fell off the bus, {1}: \"{2}\"",
     "drain and reboot the node; check power cables, PSU and cooling; reseat the GPU and check "
     "the riser and slot; update the SBIOS and driver; if it repeats ask the vendor for an RMA",
     where(k_device, k_when, k_log_line), Drain::yes},
    {codes::k_log_pcie_aer_corrected, Severity::info, "Corrected PCIe errors on a GPU",
     "The PCIe link of a GPU had errors that the hardware corrected (AER). A few are harmless; a "
     "steady stream points at signal quality.",
     "corrected PCIe (AER) errors on {0}, {1}: \"{2}\"",
     "nothing to do for a few; if they keep coming reseat the GPU, check the riser and slot, and "
     "compare the link with gpu.pcie_link",
     where(k_device, k_when, k_log_line)},
    {codes::k_log_pcie_aer_fatal, Severity::fail, "Fatal PCIe error on a GPU",
     "The PCIe link of a GPU had a fatal uncorrectable error (AER): the link was reset or lost "
     "and the GPU may have fallen off the bus.",
     "fatal PCIe (AER) error on {0}, {1}: \"{2}\"",
     "drain and reboot the node; reseat the GPU, check the riser, slot and power; update the "
     "SBIOS; if it repeats ask the vendor for an RMA",
     where(k_device, k_when, k_log_line), Drain::yes},
    {codes::k_log_pcie_aer_uncorrected, Severity::warn, "Uncorrected PCIe errors on a GPU",
     "The PCIe link of a GPU had uncorrectable, non-fatal errors (AER): transfers were lost or "
     "retried by software.",
     "uncorrected non-fatal PCIe (AER) errors on {0}, {1}: \"{2}\"",
     "reseat the GPU, check the riser and slot, update the SBIOS; watch gpu.pcie_link and the "
     "kernel log for Xid 79",
     where(k_device, k_when, k_log_line)},
    {codes::k_log_sxid, Severity::warn, "NVSwitch error (SXid)",
     "The NVSwitch driver logged a Switch Xid: an error in the NVSwitch fabric between the GPUs. "
     "Fatal SXids stop the GPUs' NVLink traffic until a reset.",
     "SXid {0} ({1}) on {2}, {3}: \"{4}\"",
     "look the SXid up in the SXid section of NVIDIA's Fabric Manager user guide and check the "
     "Fabric Manager log; a fatal SXid needs the NVSwitch and its GPUs reset (or a reboot)",
     where("the SXid number", "its severity (fatal, non-fatal)", "the NVSwitch (its PCI address)",
           k_when, k_log_line)},
    {codes::k_log_xid_application, Severity::info, "Xid caused by an application",
     "The NVIDIA driver logged an Xid that a program's own fault causes (an illegal address, a "
     "killed or failed program); the GPU itself is healthy.",
     "Xid {0} ({1}) on {3}, {4}: {2} (\"{6}\")",
     "{5} (NVIDIA's Xid catalogue: https://docs.nvidia.com/deploy/xid-errors/)",
     where("the Xid number", "its mnemonic in NVIDIA's catalogue", "what it means", k_device,
           k_when, "what to do, from NVIDIA's catalogue", k_log_line)},
    {codes::k_log_xid_fatal, Severity::fail, "Fatal Xid: GPU lost or memory error",
     "The NVIDIA driver logged an Xid that leaves the GPU unusable or its memory corrupt until a "
     "reset or reboot (fell off the bus, uncorrectable or uncontained ECC error, failed row "
     "remap, failed initialisation); a repeat means failing hardware.",
     "Xid {0} ({1}) on {3}, {4}: {2} (\"{6}\")",
     "{5} (NVIDIA's Xid catalogue: https://docs.nvidia.com/deploy/xid-errors/)",
     where("the Xid number", "its mnemonic in NVIDIA's catalogue", "what it means", k_device,
           k_when, "what to do, from NVIDIA's catalogue", k_log_line),
     Drain::yes},
    {codes::k_log_xid_hardware, Severity::warn, "Xid: GPU hardware or firmware error",
     "The NVIDIA driver logged an Xid from the GPU's hardware, firmware or links (ECC events, "
     "NVLink, GSP firmware, micro-controller, timeouts) that needs a reset or a watch.",
     "Xid {0} ({1}) on {3}, {4}: {2} (\"{6}\")",
     "{5} (NVIDIA's Xid catalogue: https://docs.nvidia.com/deploy/xid-errors/)",
     where("the Xid number", "its mnemonic in NVIDIA's catalogue", "what it means", k_device,
           k_when, "what to do, from NVIDIA's catalogue", k_log_line),
     Drain::yes},
    {codes::k_log_xid_unlisted, Severity::info, "Xid gpucheck does not know",
     "The NVIDIA driver logged an Xid that is not in gpucheck's table; NVIDIA's Xid catalogue "
     "describes it.",
     "Xid {0} on {1}, {2} (\"{3}\")",
     "look Xid {0} up in NVIDIA's Xid catalogue, https://docs.nvidia.com/deploy/xid-errors/, "
     "and follow its resolution",
     where("the Xid number", k_device, k_when, k_log_line)},
    {codes::k_nvml_driver_not_loaded, Severity::fail, "NVML: driver not loaded",
     "NVML found no running NVIDIA kernel driver.",
     "nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9){0}",
     "load the driver (sudo modprobe nvidia); see driver.kernel_module for why it is not loaded",
     where("\"; /proc/driver/nvidia/version is absent\", or empty"), Drain::yes},
    {codes::k_nvml_gpu_lost, Severity::fail, "NVML: GPU lost",
     "A GPU stopped responding (fell off the bus, Xid 79).",
     "nvmlInit_v2 returned NVML_ERROR_GPU_IS_LOST (15)",
     "drain the machine and reboot; if it repeats, check power, cooling and the slot, and ask "
     "the vendor for an RMA",
     where(), Drain::yes},
    {codes::k_nvml_init_failed, Severity::fail, "NVML initialisation failed",
     "NVML could not initialise; the code names the reason.",
     "nvmlInit_v2 returned NVML_ERROR_{0} ({1})",
     "run nvidia-smi to see the same error, check sudo dmesg | grep -i nvrm, and look up "
     "NVML_ERROR_{0} in the NVML documentation",
     where("the NVML error name, without NVML_ERROR_", "its number")},
    {codes::k_nvml_library_missing, Severity::warn, "libnvidia-ml not loadable",
     "The kernel module is loaded but NVML, the driver's management library, cannot be loaded.",
     "libnvidia-ml.so.1 cannot be loaded ({0}) although the kernel module {1} is loaded",
     "install the driver's utilities for branch {2}: {3}; in a container add utility to "
     "NVIDIA_DRIVER_CAPABILITIES",
     where("why libnvidia-ml.so.1 could not be loaded (the loader's error)",
           "version of the loaded kernel module", "the driver branch (\"580\")",
           "the command for this distribution (apt: sudo apt install libnvidia-compute-580 "
           "nvidia-utils-580; dnf: nvidia-driver-cuda and nvidia-driver-cuda-libs)")},
    {codes::k_nvml_no_permission, Severity::fail, "NVML: insufficient permissions",
     "This user may not open the GPU device nodes.",
     "nvmlInit_v2 returned NVML_ERROR_NO_PERMISSION (4)",
     "add the user to the group that owns /dev/nvidia* (often video: sudo usermod -aG video "
     "$USER, then log in again); in a container pass the devices (--gpus all)"},
    {codes::k_nvml_unknown_error, Severity::fail, "NVML: unknown error",
     "NVML failed with an unknown error; in containers this is the classic sign of device access "
     "lost after systemctl daemon-reload.",
     "nvmlInit_v2 returned NVML_ERROR_UNKNOWN (999){0}",
     "in a container: restart it, and for a lasting fix create the /dev/char symlinks (sudo "
     "nvidia-ctk system create-dev-char-symlinks --create-all); on a host: check sudo dmesg for "
     "Xid errors and reboot",
     where("\" inside a docker container\" (the container runtime), or empty")},
    {codes::k_probe_crashed, Severity::error, "Probe crashed",
     "A probe runs each NVIDIA library call in a child process; this one was killed by a signal "
     "inside the library, so its facts are missing.",
     "the {0} crashed with {1}; stderr: {2}",
     "the crash is inside the NVIDIA library the {0} loads: reinstall that library or the driver; "
     "if it persists, report it with the saved snapshot",
     where(k_probe, "the signal (\"SIGSEGV\")", k_stderr)},
    {codes::k_probe_failed, Severity::error, "Probe failed",
     "A probe's child process ended without delivering its facts.",
     "the {0} ended without a result ({1}); stderr: {2}",
     "rerun gpucheck; if it repeats, report it with the saved snapshot",
     where(k_probe, "how it ended (exit status, unreadable output)", k_stderr)},
    {codes::k_probe_timed_out, Severity::error, "Probe hung",
     "A probe's child process did not finish in time and was killed: a driver call hung.",
     "the {0} did not finish within {1} s and was killed; stderr: {2}",
     "a hung driver call usually means a GPU in a bad state: read driver.kernel_log's Xid "
     "findings, stop stuck GPU processes, reset the GPU or reboot",
     where(k_probe, "its time limit in seconds", k_stderr)},
};
} // namespace

std::span<const FindingSpec> findings_system() {
  return k_table;
}

} // namespace gpucheck
