#!/usr/bin/env python3
"""What `cmake --install`, the .deb and the .rpm put on a machine (docs/building.md, "Packages").

--build DIR: install that build tree into a temporary prefix (cmake --install) and check it.
--deb GLOB: unpack the newest .deb matching GLOB with `dpkg -x` into a temporary root and check
it, and its Depends line; exit 77 (ctest: skipped) with the reason where none matches.
--rpm GLOB: the same for the newest .rpm, unpacked with rpm2archive (no rpm database touched), its
Requires (glibc >= 2.28 and rpmlib's own features only), and that it owns no folder of another
package (the completion folders, /usr/share/man, ...).
Checked either way: the binary runs (--version), the man page renders (`man -l`) and names every
long option of `gpucheck --help`, the bash, zsh and fish completions exist and name them too (the
bash one parses with `bash -n`), and the docs with report.schema.json (valid JSON) are there.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

SKIP = 77


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited {result.returncode}:\n{result.stderr}{result.stdout}")
    return result.stdout


def check_tree(usr):
    binary = os.path.join(usr, "bin", "gpucheck")
    if not os.access(binary, os.X_OK):
        sys.exit(f"FAIL: no executable {binary}")
    print(run([binary, "--version"]).strip().replace("\n", " | "))
    options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", run([binary, "--help"]))))
    expected = {
        "man page": os.path.join(usr, "share/man/man1/gpucheck.1"),
        "bash completion": os.path.join(usr, "share/bash-completion/completions/gpucheck"),
        "zsh completion": os.path.join(usr, "share/zsh/site-functions/_gpucheck"),
        "fish completion": os.path.join(usr, "share/fish/vendor_completions.d/gpucheck.fish"),
        "JSON schema": os.path.join(usr, "share/doc/gpucheck/report.schema.json"),
        "consumer JSON schema": os.path.join(usr, "share/doc/gpucheck/report.consumer.schema.json"),
        "merge JSON schema": os.path.join(usr, "share/doc/gpucheck/merge.schema.json"),
        "architecture doc": os.path.join(usr, "share/doc/gpucheck/architecture.md"),
        "building doc": os.path.join(usr, "share/doc/gpucheck/building.md"),
    }
    for what, path in expected.items():
        if not os.path.isfile(path):
            sys.exit(f"FAIL: no {what} at {path}")
    page = run(["man", "-l", expected["man page"]], env=dict(os.environ, MANWIDTH="200",
                                                            MAN_KEEP_FORMATTING="0"))
    page = re.sub(r".\x08", "", page)
    for section in ("NAME", "SYNOPSIS", "OPTIONS", "SUBCOMMANDS", "EXIT STATUS", "ENVIRONMENT",
                    "EXAMPLES"):
        if section not in page:
            sys.exit(f"FAIL: the man page has no {section} section:\n{page[:2000]}")
    # Written for people (issue 36 item 10): every exit status and variable, no CLI11 artefacts.
    for needed in ("130, 143", "NO_COLOR", "CLICOLOR_FORCE", "COLUMNS", "GPUCHECK_TRACE",
                   "SOURCE_DATE_EPOCH", "--expect-gpus N", "--color auto|always|never"):
        if needed not in page:
            sys.exit(f"FAIL: the man page does not say {needed!r}")
    for artefact in ("Excludes:", "INT:INT", "FLOAT:", "TEXT:", "[0 - 4096]"):
        if artefact in page:
            sys.exit(f"FAIL: the man page shows CLI11's {artefact!r}")
    for what in ("man page", "bash completion", "zsh completion", "fish completion"):
        text = page if what == "man page" else open(expected[what], encoding="utf-8").read()
        if what == "fish completion":
            missing = [o for o in options if f"-l {o[2:]} " not in text]
        else:
            missing = [o for o in options if o not in text]
        if missing:
            sys.exit(f"FAIL: the {what} lacks {missing}")
    run(["bash", "-n", expected["bash completion"]])
    # Values complete too (issue 36 item 10): check ids after --skip, codes after explain.
    for words, cword, want in ((["gpucheck", "--skip", "gpu.pc"], 2, "gpu.pcie_link"),
                               (["gpucheck", "explain", "gpu.ecc_un"], 2, "gpu.ecc_uncorrected"),
                               (["gpucheck", "--format", "pro"], 2, "prometheus")):
        got = run(["bash", "-c", f'source "$1"; COMP_WORDS=({" ".join(words)}); COMP_CWORD={cword}; '
                   '_gpucheck; printf "%s\\n" "${COMPREPLY[@]}"', "bash", expected["bash completion"]])
        if want not in got.split():
            sys.exit(f"FAIL: bash completes {words} to {got.split()}, not {want}")
    fish = open(expected["fish completion"], encoding="utf-8").read()
    if "-l skip -x -a '" not in fish or "gpu.pcie_link" not in fish:
        sys.exit("FAIL: the fish completion has no check ids for --skip")
    # zsh: the values as _arguments specs (check ids after --skip, codes for explain, each
    # command's own formats), and a syntax check where zsh is installed.
    zsh = open(expected["zsh completion"], encoding="utf-8").read()
    for pattern, what in ((r"'--skip\[[^']*\]:value:\([^)]*\bgpu\.pcie_link\b", "check ids after --skip"),
                          (r"explain\) _arguments .*'1:code:\([^)]*\bgpu\.ecc_uncorrected\b", "codes for explain"),
                          (r"'--format\[Report format[^']*\]:format:\([^)]*\bprometheus\b", "formats"),
                          (r"'--config\[[^']*\]:[a-z]*:_files'", "a file after --config")):
        if not re.search(pattern, zsh):
            sys.exit(f"FAIL: the zsh completion has no {what}")
    if shutil.which("zsh"):
        run(["zsh", "-n", expected["zsh completion"]])
    with open(expected["JSON schema"], encoding="utf-8") as f:
        json.load(f)
    print(f"checked: binary, man page, 3 completions ({len(options)} options each), docs, schema")


def newest(pattern, kind):
    found = sorted(glob.glob(pattern), key=os.path.getmtime)
    if not found:
        print(f"SKIP: no {kind} matches {pattern} (cmake --workflow --preset portable, then cpack "
              "in build/portable; docs/building.md)")
        return None
    print("package:", found[-1])
    return found[-1]


def check_rpm(rpm, root):
    for tool in ("rpm", "rpm2archive"):
        if not any(os.access(os.path.join(d, tool), os.X_OK)
                   for d in os.environ.get("PATH", "").split(os.pathsep)):
            print(f"SKIP: no {tool} here to read {rpm} (scripts/install-deps.sh --portable "
                  "installs the rpm package)")
            return SKIP
    requires = [r.strip() for r in run(["rpm", "-qp", "--requires", rpm]).splitlines()
                if r.strip() and not r.startswith("rpmlib(")]
    if requires != ["glibc >= 2.28"]:
        sys.exit(f"FAIL: the .rpm requires {requires!r}; only glibc >= 2.28 is wanted")
    # Folders other packages own (bash-completion, zsh, fish, filesystem) are not the .rpm's.
    shared = {"/usr", "/usr/bin", "/usr/share", "/usr/share/man", "/usr/share/man/man1",
              "/usr/share/doc", "/usr/share/bash-completion",
              "/usr/share/bash-completion/completions", "/usr/share/zsh",
              "/usr/share/zsh/site-functions", "/usr/share/fish",
              "/usr/share/fish/vendor_completions.d"}
    owned = sorted(shared & set(run(["rpm", "-qlp", rpm]).split()))
    if owned:
        sys.exit(f"FAIL: the .rpm owns folders of other packages: {owned}")
    archive = os.path.join(os.path.dirname(root), "payload.tgz")
    with open(rpm, "rb") as source, open(archive, "wb") as out:
        result = subprocess.run(["rpm2archive", "-"], stdin=source, stdout=out,
                                stderr=subprocess.PIPE, check=False)
    if result.returncode != 0:
        sys.exit(f"FAIL: rpm2archive {rpm} exited {result.returncode}: {result.stderr.decode()}")
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(root, filter="data")
        else:  # Python before 3.11.4 (Debian 12's 3.11.2): the same refusals by hand
            for member in tar.getmembers():
                target = os.path.realpath(os.path.join(root, member.name))
                if not (member.isfile() or member.isdir()) or \
                        not target.startswith(os.path.realpath(root) + os.sep):
                    sys.exit(f"FAIL: the .rpm's payload holds {member.name!r}, which is not a "
                             "plain file or folder under the root")
            tar.extractall(root)
    check_tree(os.path.join(root, "usr"))
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build")
    parser.add_argument("--deb")
    parser.add_argument("--rpm")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.build:
            run(["cmake", "--install", args.build, "--prefix", os.path.join(tmp, "usr")])
            check_tree(os.path.join(tmp, "usr"))
        if args.rpm:
            rpm = newest(args.rpm, ".rpm")
            if rpm is None:
                return SKIP
            return check_rpm(rpm, os.path.join(tmp, "root"))
        if args.deb:
            deb = newest(args.deb, ".deb")
            if deb is None:
                return SKIP
            depends = run(["dpkg-deb", "-f", deb, "Depends"]).strip()
            if depends != "libc6 (>= 2.28)":
                sys.exit(f"FAIL: the .deb depends on {depends!r}; only libc6 (>= 2.28) is wanted")
            run(["dpkg", "-x", deb, os.path.join(tmp, "root")])
            check_tree(os.path.join(tmp, "root", "usr"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
