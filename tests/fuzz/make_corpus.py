#!/usr/bin/env python3
"""Write the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/) from real inputs: the
recorded snapshots and reports of tests/, the compatibility data, the CI example config, this
machine's /proc files, loader cache and small ELF libraries, and texts as NVIDIA's driver, the
kernel, pip and conda write them. The child payloads' seeds are written by the unit test
EnginePayloads.TheFuzzCorpusHoldsWhatTheChildrenWrite (GPUCHECK_UPDATE_FUZZ_CORPUS=1).

    tests/fuzz/make_corpus.py            # rewrite every corpus but child_output's
"""
import json
import os
import pathlib
import struct
import subprocess

SEP = "\n%%%%\n"
ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    (folder / name).write_bytes(data)


def read(path, limit=8192):
    try:
        return pathlib.Path(path).read_bytes()[:limit].decode("utf-8", "replace")
    except OSError:
        return ""


def elf_object(soname="", needed=(), runpath="", rpath=""):
    """A 64-bit little-endian ELF shared object with a dynamic section (as
    tests/support/elf_writer.cpp makes them)."""
    strtab = b"\0"
    offsets = {}
    for s in [soname, *needed, runpath, rpath]:
        if s and s not in offsets:
            offsets[s] = len(strtab)
            strtab += s.encode() + b"\0"
    dyn = []
    for n in needed:
        dyn.append((1, offsets[n]))  # DT_NEEDED
    if soname:
        dyn.append((14, offsets[soname]))  # DT_SONAME
    if rpath:
        dyn.append((15, offsets[rpath]))  # DT_RPATH
    if runpath:
        dyn.append((29, offsets[runpath]))  # DT_RUNPATH
    ehdr_size, phdr_size = 64, 56
    phoff = ehdr_size
    strtab_off = phoff + 2 * phdr_size
    dyn_off = (strtab_off + len(strtab) + 7) // 8 * 8
    dyn.append((5, strtab_off))  # DT_STRTAB (vaddr == offset in the one PT_LOAD)
    dyn.append((0, 0))
    dynamic = b"".join(struct.pack("<qQ", t, v) for t, v in dyn)
    end = dyn_off + len(dynamic)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, 0, 0, ehdr_size, phdr_size,
                               2, 64, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, end, end, 0x1000)
    dynph = struct.pack("<IIQQQQQQ", 2, 6, dyn_off, dyn_off, dyn_off, len(dynamic), len(dynamic), 8)
    out = ehdr + load + dynph + strtab
    out += bytes(dyn_off - len(out)) + dynamic
    return out


def elf_corpus():
    write("elf", "libcudnn_cnn", elf_object("libcudnn_cnn.so.9", ["libcudnn_graph.so.9",
                                                                  "libstdc++.so.6", "libc.so.6"],
                                            runpath="$ORIGIN"))
    write("elf", "libtorch_cuda", elf_object("libtorch_cuda.so", ["libcudart.so.12",
                                                                  "libcudnn.so.9", "libnccl.so.2"],
                                             runpath="$ORIGIN/../../nvidia/cudnn/lib:"
                                                     "$ORIGIN/../../nvidia/nccl/lib"))
    write("elf", "rpath_only", elf_object("libold.so.1", ["libcuda.so.1"], rpath="/opt/old/lib"))
    write("elf", "no_soname", elf_object("", ["libm.so.6"]))
    for path in ["/lib/x86_64-linux-gnu/libdl.so.2", "/lib/x86_64-linux-gnu/librt.so.1"]:
        data = pathlib.Path(path).read_bytes() if os.path.exists(path) else b""
        if data and len(data) <= 32768:
            write("elf", pathlib.Path(path).name, data)


NVRM_OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
             "(dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:55:41 UTC 2025\n"
             "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)\n")
NVRM_PROPRIETARY = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 "
                    "18:56:32 UTC 2023\nGCC version:  gcc version 11.4.0\n")
KMSG = ("6,1,0,-;Linux version 6.8.0-45-generic\n"
        "4,2,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
        " SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n"
        "3,3,6000000,-;pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0\n"
        "3,4,6000001,-;nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Corrected, "
        "type=Physical Layer, (Receiver ID)\n"
        "4,5,7000000,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=2044, name=python3, An uncorrectable "
        "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6.\n"
        "4,6,7100000,-;nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM "
        "Fault Up\n"
        "4,7,7200000,-;NVRM: Xid (PCI:0000:3b:00): 94, pid=2044, Contained: CE User Channel\n")
DPKG = ("Package: nvidia-driver-580-open\nStatus: install ok installed\nVersion: 580.95.05-0ubuntu1\n"
        "\nPackage: libnvidia-compute-580\nStatus: install ok installed\n"
        "Version: 580.95.05-0ubuntu1\n\nPackage: cuda-toolkit-13-0\nStatus: deinstall ok "
        "config-files\nVersion: 13.0.2-1\n")
LDCACHE = ("4 libs found in cache `/etc/ld.so.cache'\n"
           "\tlibnvidia-ml.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
           "\tlibcudnn.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so.9\n"
           "\tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1\n"
           "\tlibcuda.so.1 (libc6) => /usr/lib32/libcuda.so.1\n")
VERSION_JSON = ('{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "13.0.2"\n   },\n'
                '   "cuda_nvcc" : {\n      "name" : "CUDA NVCC",\n      "version" : "13.0.88"\n'
                '   }\n}\n')
PCI = "32.0 GT/s PCIe\n16\n32.0 GT/s PCIe\n16\n0\nD0\n0x2335"


def sysroot_corpus():
    files = {
        "this_machine": [read("/proc/driver/nvidia/version") or NVRM_OPEN, "580.95.05\n",
                         read("/proc/1/cgroup"), read("/proc/self/mountinfo"),
                         read("/proc/self/mounts"), read("/etc/os-release"),
                         read("/proc/cpuinfo"), read("/proc/meminfo"), KMSG,
                         "blacklist nouveau\noptions nouveau modeset=0\n",
                         read("/sys/kernel/security/lockdown") or "[none] integrity "
                         "confidentiality\n", "\x06\x00\x00\x00\x01", DPKG,
                         (subprocess.run(["ldconfig", "-p"], capture_output=True, text=True)
                          .stdout[:6000] if os.path.exists("/sbin/ldconfig") else LDCACHE),
                         read("/usr/local/cuda/version.json") or VERSION_JSON,
                         "CUDA Version 11.0.228\n", "nv-fabricmanager\n",
                         "7200.50 14000.00\n", "", PCI, "0,1"],
        "container_old_driver": [NVRM_PROPRIETARY, "535.129.03\n",
                                 "0::/system.slice/docker-4f1c.scope\n12:devices:/docker/4f1c\n",
                                 "1500 1400 0:52 / / rw,relatime - overlay overlay rw\n"
                                 "1501 1500 0:53 /driver/nvidia /proc/driver/nvidia ro - proc "
                                 "proc rw\n",
                                 "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k "
                                 "0 0\n", 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\n'
                                 'VERSION="22.04.4 LTS (Jammy Jellyfish)"\n',
                                 "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"
                                 "\nprocessor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n",
                                 "MemTotal:       2113261264 kB\nMemFree:        12 kB\n",
                                 KMSG.replace("3b:00", "5b:00"), "install nvidia /bin/false\n",
                                 "none [integrity] confidentiality\n", "\x06\x00\x00\x00\x00",
                                 "", LDCACHE, VERSION_JSON, "", "gpucheck\n", "12.00 3.00\n",
                                 "docker", "8.0 GT/s PCIe\n8\n16.0 GT/s PCIe\n16\n-1\nD3cold\n"
                                 "0x20b0", "GPU-8c3d8d2e-5b5a-4f0e-b7f0-1f2e3d4c5b6a,MIG-1"],
    }
    for name, parts in files.items():
        write("sysroot", name, SEP.join(parts))


def python_corpus():
    torch_metadata = ("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\nSummary: Tensors "
                      "and Dynamic neural networks in Python with strong GPU acceleration\n"
                      "Requires-Python: >=3.8.0\nRequires-Dist: filelock\nRequires-Dist: "
                      "nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\" and "
                      "platform_machine == \"x86_64\"\nRequires-Dist: nvidia-nccl-cu12==2.21.5; "
                      "platform_system == \"Linux\"\n\nlong description\n")
    torch_record = ("torch/__init__.py,sha256=abc,1234\ntorch/lib/libtorch_cuda.so,sha256=def,"
                    "123456\ntorch/lib/libc10_cuda.so,,\ntorch-2.5.1.dist-info/RECORD,,\n")
    cudnn_metadata = ("Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n"
                      "Requires-Dist: nvidia-cublas-cu12\n")
    cudnn_record = ("nvidia/cudnn/lib/libcudnn.so.9,sha256=x,108000\n"
                    "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9,sha256=y,600000000\n"
                    "nvidia/cudnn/include/cudnn.h,,\n")
    libtorch = elf_object("libtorch_cuda.so", ["libcudart.so.12", "libcudnn.so.9",
                                               "libnccl.so.2", "libcublas.so.12"],
                          runpath="$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib:"
                                  "$ORIGIN").decode("latin-1")
    tf_metadata = ("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.17.0\nProvides-Extra: "
                   "and-cuda\nRequires-Dist: nvidia-cudnn-cu12==8.9.7.29; extra == \"and-cuda\"\n")
    conda_python = json.dumps({"name": "python", "version": "3.11.9", "build": "h955ad1f_0",
                               "channel": "https://repo.anaconda.com/pkgs/main/linux-64",
                               "files": ["bin/python3.11", "lib/python3.11/os.py"]}, indent=1)
    patchlevel = ('#define PY_MAJOR_VERSION\t3\n#define PY_MINOR_VERSION\t11\n'
                  '#define PY_MICRO_VERSION\t9\n#define PY_VERSION\t\t"3.11.9"\n')
    jax = "Metadata-Version: 2.1\nName: jax\nVersion: 0.4.30\nRequires-Dist: jaxlib<=0.4.30\n"
    jax_plugin = ("Metadata-Version: 2.1\nName: jax-cuda12-plugin\nVersion: 0.4.30\n"
                  "Requires-Dist: jax-cuda12-pjrt==0.4.30\n")
    venv = "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"
    write("python_env", "torch_venv_conda_jax", SEP.join(
        [venv, torch_metadata, torch_record, cudnn_metadata, cudnn_record, libtorch, tf_metadata,
         conda_python, patchlevel, jax, jax_plugin, "/usr/local/cuda/lib64:/opt/nvidia/lib"]))
    write("python_env", "system_site_packages", SEP.join(
        ["home = /usr/bin\ninclude-system-site-packages = true\nversion_info = 3.12.3.final.0\n"
         "executable = /usr/bin/python3.12\ncommand = /usr/bin/python3 -m venv /opt/venv\n",
         torch_metadata.replace("2.5.1+cu124", "2.4.0"), "", "", "", "", "", "", "", "", "", ""]))


def json_corpora():
    for snapshot in sorted((ROOT / "tests" / "snapshots").glob("*.json")):
        write("snapshot", snapshot.name, snapshot.read_bytes())
    write("matrix", "matrix.json", (ROOT / "data" / "compat" / "matrix.json").read_bytes())
    matrix = json.loads((ROOT / "data" / "compat" / "matrix.json").read_text())
    small = {k: (v[:2] if isinstance(v, list) else v) for k, v in matrix.items()}
    write("matrix", "matrix_small.json", json.dumps(small, indent=1))
    reports = sorted((ROOT / "tests" / "golden").glob("*.json"))
    for report in reports:
        write("merge", report.name, report.read_bytes())
    write("merge", "three_nodes", SEP.join(r.read_text() for r in reports[:3]))
    write("merge", "snapshot_and_garbage", SEP.join(
        [(ROOT / "tests" / "snapshots" / "no_driver.json").read_text(), "{\"schema_version\": 99}",
         "not json"]))
    write("config", "gpucheck.toml", (ROOT / "examples" / "ci" / "gpucheck.toml").read_bytes())
    write("config", "gpucheck.json", json.dumps({
        "expect-gpus": 8, "require": ["driver>=570", "cudnn>=9.1"], "fail-on": "warn",
        "ignore": ["gpu.persistence_off"], "min": ["h2d_gbps=20", "d2d_gbps=1000"],
        "timeout": 30, "quick": True, "only": ["driver", "gpu"]}, indent=1))
    write("config", "sections.toml", "expect-gpus = 2\nlevel = \"standard\"\n[min]\n"
                                     "nccl_busbw_gbps = 300.5\n# comment\nonly = 'gpu.p2p'\n")


def archive_corpus():
    mtime = struct.pack("<q", 1764163200)
    write("archive", "bundle", mtime + SEP.join(
        ["gpucheck-bundle/report.md\n# gpucheck report\n\n| check | status |\n",
         "gpucheck-bundle/report.json\n{\"schema_version\": 1}\n",
         "gpucheck-bundle/raw/proc/driver/nvidia/version\n" + NVRM_OPEN,
         "gpucheck-bundle/" + "x" * 84 + "\n" + "\0" * 700]).encode())
    write("archive", "empty_members", struct.pack("<q", 0) + SEP.join(["a\n", "b"]).encode())


if __name__ == "__main__":
    elf_corpus()
    sysroot_corpus()
    python_corpus()
    json_corpora()
    archive_corpus()
