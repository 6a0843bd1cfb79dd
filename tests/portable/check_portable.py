#!/usr/bin/env python3
"""The portable release binary (preset "portable", docs/building.md) runs on glibc 2.28.

Reads its dynamic symbol versions (`objdump -T`: no GLIBC_ above 2.28, no libstdc++/libgcc
versions, the C++ runtime is inside) and its NEEDED entries (`readelf -d`: libc, libm, libdl,
libpthread, ld-linux only), then runs it: `--version`, and `--quick --json` against the suite's
fake NVIDIA libraries, whose checks and statuses must equal those of the reference build's binary
run the same way. Exit 77 (ctest: skipped) with the reason where there is no portable build, or
where it was built from another commit than the reference.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
GLIBC_FLOOR = (2, 28)
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                  "ld-linux-x86-64.so.2"}


def run(argv, env=None, check=True):
    result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=120)
    if check and result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited {result.returncode}:\n{result.stderr}")
    return result


def quick_statuses(binary, fake_lib_dir):
    with tempfile.TemporaryDirectory() as root:
        env = dict(os.environ, LD_LIBRARY_PATH=fake_lib_dir, GPUCHECK_SYSROOT=root,
                   NO_COLOR="1")
        env.pop("FAKE_GPU_SCENARIO", None)
        result = run([binary, "--quick", "--json"], env=env, check=False)
    if result.returncode not in (0, 1, 2):
        sys.exit(f"FAIL: {binary} --quick --json exited {result.returncode}:\n{result.stderr}")
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError as error:
        sys.exit(f"FAIL: {binary} --quick --json wrote no JSON ({error}):\n{result.stdout[:2000]}")
    return {(r["check_id"], r.get("gpu_index")): r["status"] for r in report["results"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--portable", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--fake-lib-dir", required=True)
    args = parser.parse_args()

    if not os.path.exists(args.portable):
        print(f"SKIP: no portable build at {args.portable} "
              "(cmake --workflow --preset portable; docs/building.md)")
        return SKIP

    symbols = run(["objdump", "-T", args.portable]).stdout
    glibc = sorted({tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)", symbols)})
    print("GLIBC versions:", ", ".join(".".join(map(str, v)) for v in glibc))
    too_new = [v for v in glibc if v > GLIBC_FLOOR]
    if too_new:
        names = {"GLIBC_" + ".".join(map(str, v)) for v in too_new}
        lines = [line for line in symbols.splitlines()
                 if set(re.findall(r"GLIBC_[0-9.]+", line)) & names]
        sys.exit("FAIL: symbols newer than glibc 2.28:\n" + "\n".join(lines))
    runtime = sorted(set(re.findall(r"\b(GLIBCXX_[0-9.]+|CXXABI_[0-9.]+|GCC_[0-9.]+)", symbols)))
    if runtime:
        sys.exit(f"FAIL: the C++ runtime is linked dynamically: {', '.join(runtime)}")

    dynamic = run(["readelf", "-d", args.portable]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    print("NEEDED:", ", ".join(needed))
    extra = [n for n in needed if n not in ALLOWED_NEEDED]
    if extra or "libc.so.6" not in needed:
        sys.exit(f"FAIL: NEEDED has {extra or 'no libc.so.6'}; allowed: {sorted(ALLOWED_NEEDED)}")
    if any("cuda" in n or "nvidia" in n for n in needed):
        sys.exit("FAIL: an NVIDIA library is linked")

    version = run([args.portable, "--version"]).stdout.strip()
    print("--version:", version.replace("\n", " | "))
    if not version.startswith("gpucheck "):
        sys.exit(f"FAIL: --version printed {version!r}")
    reference_version = run([args.reference, "--version"]).stdout.strip()
    if version != reference_version:
        print(f"SKIP: the portable build ({version!r}) is not the reference build "
              f"({reference_version!r}): rebuild it (cmake --build --preset portable)")
        return SKIP

    portable = quick_statuses(args.portable, args.fake_lib_dir)
    reference = quick_statuses(args.reference, args.fake_lib_dir)
    if not portable:
        sys.exit("FAIL: the portable binary's report has no results")
    if portable != reference:
        diff = sorted(set(portable.items()) ^ set(reference.items()))
        sys.exit(f"FAIL: the portable and reference binaries disagree: {diff}")
    print(f"--quick --json: {len(portable)} results, the same as the reference build's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
