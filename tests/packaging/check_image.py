#!/usr/bin/env python3
"""The container image, built without a daemon (scripts/build-image.py, issue 36), checked as a
runtime would read it and then run.

    check_image.py --gpucheck BUILD/gpucheck --script scripts/build-image.py

Builds the image into a temporary directory (exit 77, ctest's skip, where its packages cannot be
fetched), then checks: the OCI layout (oci-layout, index.json naming the tag, manifest, config and
layer blobs whose digests and sizes are their contents', the config's diff_id the uncompressed
layer's), the layer (every member owned by root with the time stamp SOURCE_DATE_EPOCH, the
entrypoint an executable file identical to the binary, the C library and zlib present) and
Docker's manifest.json; then unpacks the layer and runs gpucheck in it, chrooted in a user
namespace with /proc mounted: `--version`, and `--quick --json`, a valid report whose
driver.installed result says the image has no driver (or, on a GPU machine, that the host's
kernel module is loaded).
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

SKIP = 77
EPOCH = 1764547200  # 2025-12-01: any fixed time stamp


def fail(message):
    sys.exit(f"FAIL: {message}")


def blob_path(layout, digest):
    algorithm, _, hexdigest = digest.partition(":")
    if algorithm != "sha256":
        fail(f"digest {digest} is not sha256")
    return layout / "blobs" / "sha256" / hexdigest


def read_blob(layout, descriptor):
    data = blob_path(layout, descriptor["digest"]).read_bytes()
    if f"sha256:{hashlib.sha256(data).hexdigest()}" != descriptor["digest"]:
        fail(f"blob {descriptor['digest']} does not hash to its digest")
    if len(data) != descriptor["size"]:
        fail(f"blob {descriptor['digest']} is {len(data)} bytes, its descriptor says "
             f"{descriptor['size']}")
    return data


def check_layout(layout, binary):
    if json.loads((layout / "oci-layout").read_text()) != {"imageLayoutVersion": "1.0.0"}:
        fail("oci-layout is not version 1.0.0")
    index = json.loads((layout / "index.json").read_text())
    [entry] = index["manifests"]
    if entry["annotations"]["org.opencontainers.image.ref.name"] != "9.9.9":
        fail(f"index.json names {entry['annotations']}, not the tag 9.9.9")
    manifest = json.loads(read_blob(layout, entry))
    config = json.loads(read_blob(layout, manifest["config"]))
    [layer_descriptor] = manifest["layers"]
    if layer_descriptor["mediaType"] != "application/vnd.oci.image.layer.v1.tar+gzip":
        fail(f"layer media type {layer_descriptor['mediaType']}")
    layer = gzip.decompress(read_blob(layout, layer_descriptor))
    if config["rootfs"]["diff_ids"] != [f"sha256:{hashlib.sha256(layer).hexdigest()}"]:
        fail("the config's diff_id is not the uncompressed layer's digest")
    entrypoint = config["config"]["Entrypoint"]
    if entrypoint != ["/usr/local/bin/gpucheck"]:
        fail(f"entrypoint {entrypoint}")
    if "NVIDIA_DRIVER_CAPABILITIES=compute,utility" not in config["config"]["Env"]:
        fail("the image does not ask the NVIDIA runtime for compute and utility libraries")
    docker = json.loads((layout / "manifest.json").read_text())
    if docker[0]["RepoTags"] != ["gpucheck:9.9.9"] or \
            not (layout / docker[0]["Layers"][0]).is_file():
        fail(f"Docker's manifest.json: {docker}")
    names = set()
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        for member in tar.getmembers():
            names.add(member.name)
            if member.uid != 0 or member.gid != 0 or member.mtime != EPOCH:
                fail(f"{member.name}: owner {member.uid}:{member.gid}, time {member.mtime}")
        gpucheck = tar.getmember("usr/local/bin/gpucheck")
        if not gpucheck.isfile() or gpucheck.mode & 0o111 == 0:
            fail("usr/local/bin/gpucheck is not an executable file")
        if tar.extractfile(gpucheck).read() != pathlib.Path(binary).read_bytes():
            fail("usr/local/bin/gpucheck is not the binary given")
    for applet in ("bin/sh", "bin/sleep", "bin/rm"):
        if applet not in names:
            fail(f"the layer has no {applet} for the DaemonSet's loop")
    for needed in ("libc.so.6", "libz.so.1"):
        if not any(name.endswith("/" + needed) for name in names):
            fail(f"the layer has no {needed}")
    print(f"layout: manifest {entry['digest']}, {len(names)} files, layer "
          f"{layer_descriptor['size']} bytes compressed")
    return layer


def run_inside(rootfs, *args):
    script = (f'mount -t proc proc "{rootfs}/proc" && exec chroot "{rootfs}" '
              f'/usr/local/bin/gpucheck {" ".join(args)}')
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork",
                           "sh", "-c", script], capture_output=True, text=True, check=False)


def sanitizer_runtime(binary):
    """The sanitizer runtime the binary needs (the asan preset's build), or None: the image
    holds no such library, so a sanitized gpucheck cannot run in it."""
    needed = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False).stdout
    for name in ("libasan", "libubsan", "libtsan"):
        if name in needed:
            return name
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--script", required=True)
    args = parser.parse_args()
    if runtime := sanitizer_runtime(args.gpucheck):
        print(f"SKIP: {args.gpucheck} needs {runtime} (a sanitizer's build), which no image holds")
        return SKIP
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
        built = subprocess.run([sys.executable, args.script, "--gpucheck", args.gpucheck,
                                "--out", str(work / "out"), "--tag", "9.9.9"],
                               capture_output=True, text=True, env=env, check=False)
        if built.returncode == SKIP:
            print(f"SKIP: {built.stderr.strip()}")
            return SKIP
        if built.returncode != 0:
            fail(f"build-image.py exited {built.returncode}: {built.stderr}")
        layout = work / "out" / "gpucheck-image"
        layer = check_layout(layout, args.gpucheck)
        if not (work / "out" / "gpucheck-image.tar").is_file():
            fail("no gpucheck-image.tar beside the layout")
        rootfs = work / "rootfs"
        rootfs.mkdir()
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            tar.extractall(rootfs, filter="tar" if hasattr(tarfile, "tar_filter") else None)
        (rootfs / "proc").mkdir(exist_ok=True)
        if shutil.which("unshare") is None:
            print("SKIP: no unshare(1) to run the image's gpucheck")
            return SKIP
        probe = subprocess.run(["unshare", "--user", "--map-root-user", "true"],
                               capture_output=True, text=True, check=False)
        if probe.returncode != 0:
            print(f"SKIP: this machine allows no user namespace: {probe.stderr.strip()}")
            return SKIP
        version = run_inside(rootfs, "--version")
        if version.returncode != 0 or not version.stdout.startswith("gpucheck "):
            fail(f"gpucheck --version in the image exited {version.returncode}: "
                 f"{version.stderr}{version.stdout}")
        print("in the image:", version.stdout.splitlines()[0])
        # The DaemonSet's loop needs the image's shell and sleep.
        loop = subprocess.run(["unshare", "--user", "--map-root-user", "chroot", str(rootfs),
                               "/bin/sh", "-c", "sleep 0 && echo looped"],
                              capture_output=True, text=True, check=False)
        if loop.stdout.strip() != "looped":
            fail(f"the image's /bin/sh and sleep: {loop.returncode} {loop.stderr}")
        report = run_inside(rootfs, "--quick", "--json")
        if report.returncode not in (0, 1):
            fail(f"gpucheck --quick --json in the image exited {report.returncode}: "
                 f"{report.stderr}")
        results = {r["check_id"]: r for r in json.loads(report.stdout)["results"]}
        installed = results["driver.installed"]
        codes = [f["code"] for f in installed.get("findings", [])]
        # The image carries no driver library: without the NVIDIA runtime it sees the host's
        # kernel module through /proc at most.
        module = os.path.exists("/proc/driver/nvidia/version")
        if (module and installed["status"] != "pass") or \
                (not module and (installed["status"] != "fail" or codes != ["driver.missing"])):
            fail(f"driver.installed in the image: {installed['status']} {codes}")
        print(f"in the image: --quick --json exited {report.returncode}, "
              f"{len(results)} results, driver.installed: {installed['status']} {codes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
