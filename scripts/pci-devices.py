#!/usr/bin/env python3
"""Regenerate the matrix's `pci_devices` section (data/compat/matrix.json) from the "Compatible
GPUs" table of NVIDIA's open-gpu-kernel-modules README: every Turing-or-later GPU's PCI device
ID and product name. One entry per device ID: the row without a subsystem ID where there is
one, else the first row.

    scripts/pci-devices.py README.md COMMIT DRIVER_VERSION   # rewrites data/compat/matrix.json
"""
import json
import pathlib
import re
import sys

ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<id>[0-9A-F]{4})(?P<sub>(?: [0-9A-F]{4}){2})?\s*\|$")


def devices(readme):
    by_id = {}
    for line in readme.splitlines():
        row = ROW.match(line.strip())
        if not row:
            continue
        device = row["id"].lower()
        if device not in by_id or (not row["sub"] and by_id[device][1]):
            by_id[device] = (row["name"], bool(row["sub"]))
    return [{"id": d, "name": by_id[d][0]} for d in sorted(by_id)]


def main():
    readme, commit, driver = pathlib.Path(sys.argv[1]).read_text(), sys.argv[2], sys.argv[3]
    path = pathlib.Path(__file__).resolve().parent.parent / "data/compat/matrix.json"
    text = path.read_text()
    section = {
        "driver": driver,
        "status": "official",
        "note": "the GPUs NVIDIA's open kernel modules support (Turing and later); a device not "
                "listed is older than Turing or newer than this driver",
        "source": f"https://github.com/NVIDIA/open-gpu-kernel-modules/blob/{commit}/README.md",
    }
    # The section goes last, one device per line, the rest of the file untouched.
    head = text[:text.index(',\n  "pci_devices"')] if '"pci_devices"' in text else \
        text.rstrip()[:-1].rstrip()
    lines = [f'    {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},' for k, v in section.items()]
    entries = [f'      {json.dumps(d, ensure_ascii=False)}' for d in devices(readme)]
    path.write_text(head + ',\n  "pci_devices": {\n' + "\n".join(lines) + '\n    "devices": [\n' +
                    ",\n".join(entries) + "\n    ]\n  }\n}\n")

if __name__ == "__main__":
    main()
