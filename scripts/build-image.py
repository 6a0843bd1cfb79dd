#!/usr/bin/env python3
"""Build gpucheck's container image without a container daemon (issue 36): a distroless-style
root file system made of the Debian packages gpucheck needs (libc6 and zlib1g at the versions
installed here or newer, base-files, and busybox-static for the DaemonSet's shell loop; fetched
with `apt-get download`, unpacked with `dpkg-deb -x`), the gpucheck binary, then an OCI image layout written here: one reproducible layer (sorted, owner
root, every time stamp SOURCE_DATE_EPOCH), its config and manifest, `index.json` naming the tag.
The NVIDIA container runtime injects the driver's libraries and device nodes at start, as with
deploy/docker/Dockerfile, which builds the same image where a daemon exists.

    scripts/build-image.py --gpucheck build/portable/gpucheck --out build/image [--tag 0.1.0]

The layout directory and its tar (`gpucheck-image.tar`, for `docker load`, `podman load` or
`skopeo copy oci-archive:...`) come out under --out. Exit 77 when the packages cannot be fetched
(no package registry reached, not a Debian or Ubuntu machine): nothing is half-built.
"""
import argparse
import datetime
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

# At the versions installed here or newer: the C library and zlib gpucheck was linked against.
PINNED = ("libc6", "zlib1g")
# At the registry's version: os-release, and one static binary for the DaemonSet's loop (sh,
# sleep, rm) and for reading reports with kubectl exec (cat, ls).
OTHERS = ("base-files", "busybox-static")
APPLETS = ("sh", "sleep", "rm", "cat", "ls")
ENTRYPOINT = "/usr/local/bin/gpucheck"
# dpkg's architecture names -> OCI's.
ARCHITECTURES = {"amd64": "amd64", "arm64": "arm64", "ppc64el": "ppc64le"}


def run(*args, cwd=None):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True).stdout


def installed_version(package):
    try:
        return run("dpkg-query", "-W", "-f=${Version}", package).strip()
    except subprocess.CalledProcessError:
        print(f"build-image: {package} is not installed through dpkg here", file=sys.stderr)
        sys.exit(77)


def fetch_packages(where):
    """The packages at the versions installed here: the image's libc is the one gpucheck was
    linked against (the portable build needs glibc 2.28 or newer)."""
    for package in OTHERS:
        try:
            run("apt-get", "download", package, cwd=where)
        except subprocess.CalledProcessError as e:
            print(f"build-image: cannot fetch {package}: {e.stderr.strip()}", file=sys.stderr)
            sys.exit(77)
    for package in PINNED:
        installed = installed_version(package)
        try:
            run("apt-get", "download", f"{package}={installed}", cwd=where)
            continue
        except subprocess.CalledProcessError:
            pass  # that exact version has left the registry: its newer one will do
        try:
            run("apt-get", "download", package, cwd=where)
        except subprocess.CalledProcessError as e:
            print(f"build-image: cannot fetch {package}: {e.stderr.strip()}", file=sys.stderr)
            sys.exit(77)
        deb = next(pathlib.Path(where).glob(f"{package}_*.deb"))
        fetched = run("dpkg-deb", "-f", str(deb), "Version").strip()
        if subprocess.run(["dpkg", "--compare-versions", fetched, "lt", installed]).returncode == 0:
            sys.exit(f"build-image: the registry has {package} {fetched}, older than the "
                     f"{installed} gpucheck was built against")
    return sorted(pathlib.Path(where).glob("*.deb"))


def make_rootfs(rootfs, debs, gpucheck):
    for deb in debs:
        run("dpkg-deb", "-x", str(deb), str(rootfs))
    # Documentation the packages carry has no use in the image.
    for path in ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/lintian"):
        shutil.rmtree(rootfs / path, ignore_errors=True)
    for applet in APPLETS:
        link = rootfs / "bin" / applet
        if not link.exists():
            link.symlink_to("busybox")
    (rootfs / "tmp").mkdir(mode=0o1777, exist_ok=True)
    (rootfs / "tmp").chmod(0o1777)
    etc = rootfs / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text("root:x:0:0:root:/root:/sbin/nologin\n"
                                "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")
    (etc / "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    (rootfs / "root").mkdir(mode=0o700, exist_ok=True)
    target = rootfs / ENTRYPOINT.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(gpucheck, target)
    target.chmod(0o755)


def add_tree(tar, root, epoch):
    """Every file under `root`, sorted, owned by root, every time stamp `epoch`: the same bytes
    from the same tree (a reproducible layer and archive)."""
    for path in sorted(root.rglob("*")):
        info = tar.gettarinfo(str(path), arcname=str(path.relative_to(root)))
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mtime = epoch
        info.pax_headers = {}
        if info.isfile():
            with open(path, "rb") as f:
                tar.addfile(info, f)
        else:
            tar.addfile(info)


def layer_tar(rootfs, epoch):
    """The root file system as one tar (add_tree)."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w", format=tarfile.PAX_FORMAT) as tar:
        add_tree(tar, rootfs, epoch)
    return data.getvalue()


def blob(layout, content):
    digest = hashlib.sha256(content).hexdigest()
    path = layout / "blobs" / "sha256" / digest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return f"sha256:{digest}", len(content)


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def write_layout(layout, rootfs, tag, epoch):
    tar = layer_tar(rootfs, epoch)
    compressed = gzip.compress(tar, mtime=0)
    layer_digest, layer_size = blob(layout, compressed)
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    arch = ARCHITECTURES.get(run("dpkg", "--print-architecture").strip(), "amd64")
    config = {
        "created": created,
        "architecture": arch,
        "os": "linux",
        "config": {
            "Entrypoint": [ENTRYPOINT],
            "Env": ["PATH=/usr/local/bin:/usr/bin:/bin",
                    # Ask the NVIDIA runtime for compute and utility (NVML) libraries.
                    "NVIDIA_DRIVER_CAPABILITIES=compute,utility"],
            "Labels": {"org.opencontainers.image.title": "gpucheck",
                       "org.opencontainers.image.version": tag},
        },
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(tar).hexdigest()}"]},
        "history": [{"created": created, "created_by": "scripts/build-image.py"}],
    }
    config_digest, config_size = blob(layout, canonical(config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": config_size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_digest, "size": layer_size}],
    }
    manifest_digest, manifest_size = blob(layout, canonical(manifest))
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": manifest_digest, "size": manifest_size,
                       "annotations": {"org.opencontainers.image.ref.name": tag,
                                       "io.containerd.image.name": f"gpucheck:{tag}"}}],
    }
    (layout / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}\n')
    # Docker's own loader reads manifest.json beside the OCI files (as `docker save` writes).
    (layout / "manifest.json").write_text(json.dumps([{
        "Config": f"blobs/sha256/{config_digest.split(':')[1]}",
        "RepoTags": [f"gpucheck:{tag}"],
        "Layers": [f"blobs/sha256/{layer_digest.split(':')[1]}"],
    }]) + "\n")
    return manifest_digest


def archive(layout, path, epoch):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        add_tree(tar, layout, epoch)


def main():
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        print("build-image: needs apt-get and dpkg-deb (a Debian or Ubuntu machine)",
              file=sys.stderr)
        sys.exit(77)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpucheck", required=True, help="the binary to put in the image")
    parser.add_argument("--out", required=True, help="directory for the layout and its tar")
    parser.add_argument("--tag", default="0.1.0")
    args = parser.parse_args()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    out = pathlib.Path(args.out)
    layout = out / "gpucheck-image"
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        (work / "debs").mkdir()
        debs = fetch_packages(work / "debs")
        rootfs = work / "rootfs"
        rootfs.mkdir()
        make_rootfs(rootfs, debs, args.gpucheck)
        shutil.rmtree(layout, ignore_errors=True)
        layout.mkdir(parents=True)
        digest = write_layout(layout, rootfs, args.tag, epoch)
    archive(layout, out / "gpucheck-image.tar", epoch)
    print(f"{layout} (gpucheck:{args.tag}, manifest {digest}) and {out / 'gpucheck-image.tar'}")


if __name__ == "__main__":
    main()
