#!/usr/bin/env python3
"""Build one kernel image (a fatbin) of gpucheck's kernels with an older CUDA toolkit's NVRTC.

The older toolkits come as NVIDIA's Python wheels (scripts/install-deps.sh installs them):
nvidia-cuda-nvrtc-cuXX holds libnvrtc (the whole CUDA C++ compiler: source -> PTX or SASS) and
nvidia-cuda-nvcc-cuXX holds ptxas. Neither holds nvcc or fatbinary, so NVRTC compiles and the
build's own `fatbinary` (CUDA 13) packs the result into one uncompressed fatbin.

For every architecture NVRTC supports at or above --min-arch it writes SASS (nvrtcGetCUBIN), and
for the lowest one PTX. --ptx-isa X.Y rewrites the PTX's `.version` line down to X.Y: NVRTC always
writes its own toolkit's ISA version (7.8 for 11.8), which a driver older than that toolkit cannot
JIT; gpucheck's kernels use nothing newer than X.Y, and the rewritten PTX is proven valid for X.Y
by assembling it with the wheel's ptxas (which rejects an instruction newer than the declared
ISA) before it is packed. Exit status 1 with a message on any failure; nothing is downloaded.
"""

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile

# NVRTC has no C library headers; the kernels need only the fixed-width integer types.
STDINT = """#pragma once
typedef signed char int8_t; typedef unsigned char uint8_t;
typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t;
typedef long long int64_t; typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
"""


def fail(message):
    print(f"nvrtc_image.py: {message}", file=sys.stderr)
    sys.exit(1)


class Nvrtc:
    def __init__(self, lib_dir):
        names = sorted(os.listdir(lib_dir))
        builtins = [n for n in names if n.startswith("libnvrtc-builtins.so.")]
        main = [n for n in names if re.fullmatch(r"libnvrtc\.so\.[0-9.]+", n)]
        if not builtins or not main:
            fail(f"no libnvrtc.so.* and libnvrtc-builtins.so.* in {lib_dir}")
        # libnvrtc dlopens its builtins by soname: load them first, globally.
        ctypes.CDLL(os.path.join(lib_dir, builtins[0]), mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(os.path.join(lib_dir, main[0]))
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        self.version = (major.value, minor.value)

    def check(self, rc, what, log=""):
        if rc != 0:
            self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p
            fail(f"{what}: {self.lib.nvrtcGetErrorString(rc).decode()}\n{log}")

    def archs(self):
        count = ctypes.c_int()
        self.check(self.lib.nvrtcGetNumSupportedArchs(ctypes.byref(count)), "archs")
        values = (ctypes.c_int * count.value)()
        self.check(self.lib.nvrtcGetSupportedArchs(values), "archs")
        return sorted(set(values))

    def compile(self, source, name, include_dir, target, output):
        prog = ctypes.c_void_p()
        headers = (ctypes.c_char_p * 1)(STDINT.encode())
        names = (ctypes.c_char_p * 1)(b"stdint.h")
        self.check(
            self.lib.nvrtcCreateProgram(
                ctypes.byref(prog), source.encode(), name.encode(), 1, headers, names),
            "nvrtcCreateProgram")
        options = [f"--gpu-architecture={target}", f"-I{include_dir}", "--std=c++17"]
        argv = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = self.lib.nvrtcCompileProgram(prog, len(options), argv)
        size = ctypes.c_size_t()
        self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        self.lib.nvrtcGetProgramLog(prog, log)
        self.check(rc, f"compile {name} for {target}", log.value.decode(errors="replace"))
        kind = "PTX" if output == "ptx" else "CUBIN"
        getter_size = getattr(self.lib, f"nvrtcGet{kind}Size")
        getter = getattr(self.lib, f"nvrtcGet{kind}")
        self.check(getter_size(prog, ctypes.byref(size)), f"nvrtcGet{kind}Size")
        data = ctypes.create_string_buffer(size.value)
        self.check(getter(prog, data), f"nvrtcGet{kind}")
        self.lib.nvrtcDestroyProgram(ctypes.byref(prog))
        raw = data.raw[: size.value]
        return raw.rstrip(b"\0") if output == "ptx" else raw


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvrtc-lib-dir", required=True)
    parser.add_argument("--ptxas", required=True, help="the same toolkit's ptxas (checks the PTX)")
    parser.add_argument("--fatbinary", required=True, help="the build toolkit's fatbinary")
    parser.add_argument("--min-arch", type=int, default=50)
    parser.add_argument("--ptx-isa", default="", help="rewrite the PTX to this ISA version")
    parser.add_argument("--include-dir", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--list-archs", action="store_true",
                        help="print the SASS architectures and the toolkit version; build nothing")
    parser.add_argument("source")
    args = parser.parse_args()

    nvrtc = Nvrtc(args.nvrtc_lib_dir)
    archs = [a for a in nvrtc.archs() if a >= args.min_arch]
    if not archs:
        fail(f"NVRTC {nvrtc.version} supports no architecture >= sm_{args.min_arch}")
    if args.list_archs:
        print(f"{nvrtc.version[0]}.{nvrtc.version[1]};{','.join(map(str, archs))}")
        return
    with open(args.source, encoding="utf-8") as f:
        source = f.read()
    name = os.path.basename(args.source)
    images = []
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            path = os.path.join(tmp, f"sm_{arch}.cubin")
            with open(path, "wb") as f:
                f.write(nvrtc.compile(source, name, args.include_dir, f"sm_{arch}", "cubin"))
            images.append(f"--image3=kind=elf,sm={arch},file={path}")
        ptx = nvrtc.compile(source, name, args.include_dir, f"compute_{archs[0]}", "ptx").decode()
        if args.ptx_isa:
            ptx, count = re.subn(r"^\.version [0-9]+\.[0-9]+$", f".version {args.ptx_isa}", ptx,
                                 count=1, flags=re.M)
            if count != 1:
                fail("the PTX has no .version line to rewrite")
        ptx_path = os.path.join(tmp, f"compute_{archs[0]}.ptx")
        with open(ptx_path, "w", encoding="utf-8") as f:
            f.write(ptx)
        # ptxas rejects an instruction or directive the declared ISA version does not have.
        checked = subprocess.run(
            [args.ptxas, f"-arch=sm_{archs[0]}", "-o", os.path.join(tmp, "check.cubin"), ptx_path],
            capture_output=True, text=True, check=False)
        if checked.returncode != 0:
            fail(f"{args.ptxas} rejects the PTX:\n{checked.stderr}")
        images.append(f"--image3=kind=ptx,sm={archs[0]},file={ptx_path}")
        packed = subprocess.run(
            [args.fatbinary, "--64", "--create", args.output, "--compress=false", *images],
            capture_output=True, text=True, check=False)
        if packed.returncode != 0:
            fail(f"fatbinary failed:\n{packed.stderr}{packed.stdout}")


if __name__ == "__main__":
    main()
