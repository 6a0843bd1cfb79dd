#!/usr/bin/env python3
"""Every gpucheck command shown in README.md and docs/*.md runs, and every finding code they
quote exists.

Commands: each line of a ```sh, ```bash, ```shell or ```console block (in console blocks, the
lines after "$ ") is split at the shell's operators (; | && || > <); every simple command whose
program is gpucheck (also build/ci/gpucheck, /usr/local/bin/gpucheck, after VAR=value prefixes) is
run with the gpucheck under test, in a scratch directory that holds what the docs name (reports/
and gpucheck-reports/ with the recorded reports, node1.json and node2.json, node7.json and
facts.json as snapshots, gpucheck-report.json, examples/, deploy/ and tests/). A command that probes
(the run, `report`, `matrix`) replays each recorded snapshot (tests/snapshots/) with
--from-snapshot instead, unless it names one itself. It must exit 0 or 1 (a verdict), never 2
(usage) or 3. A block can opt out with an HTML comment on the line right before its fence:
  <!-- docs-test: skip REASON -->                    the whole block
  <!-- docs-test: skip-command "TEXT" REASON -->     its commands that contain TEXT
Skips are counted and listed with their reasons; a skip-command that matches nothing is an error.

Outputs: a block of any language preceded by
  <!-- docs-test: output-of COMMAND -->
shows COMMAND's output (COMMAND: VAR=value words, then gpucheck and its arguments), abridged:
every line of the block except "..." and "# ..." lines (elisions) must be a line of that output
(stdout, then stderr), in the same order. "$ COMMAND" lines (with their continuation lines) must
name the marked command and are not compared; "$ echo $?" and the line after it show its exit
code, which must be that. Instead of a command,
  <!-- docs-test: golden FILE -->
compares the block with a golden file a test keeps equal to the output (its "$ " line is that
test's command). The report's header line is compared without its mode and time, commit hashes
without their digits. A block of another language that shows gpucheck's output (a line starting
"gpucheck ", "$ gpucheck", "Root cause", "Result: ", "## gpucheck report", a check status, or a
report's JSON keys) must carry one of those markers or
  <!-- docs-test: not-output REASON -->
A `*_duration_seconds` sample (the run's own wall time) is compared by name only.

Codes: every backticked token that looks like a finding code (area.snake_case, in an area of the
catalogue or of a check id, or that area with an "s") must be a catalogue code (`gpucheck explain
all`), a check id (`gpucheck list`), or a field path of the snapshot or report JSON
(`nvml.device_count`, `summary.overall`). File names (`cuda.h`) are not codes.

Usage: check_docs.py --source REPO_ROOT --gpucheck BINARY
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

OPERATORS = {";", "|", "||", "&", "&&", ">", ">>", "<", "(", ")", ";;", "|&", "2>", "&>"}
SHELL_WORDS = {"do", "then", "else", "if", "while", "until", "time", "exec", "env", "sudo", "!"}
PROBING = {None, "report", "matrix"}
SKIP_BLOCK = re.compile(r"^\s*<!--\s*docs-test:\s*skip\s+(.+?)\s*-->\s*$")
OUTPUT_OF = re.compile(r"^\s*<!--\s*docs-test:\s*output-of\s+(.+?)\s*-->\s*$")
SKIP_COMMAND = re.compile(r'^\s*<!--\s*docs-test:\s*skip-command\s+"([^"]+)"\s+(.+?)\s*-->\s*$')
GOLDEN = re.compile(r"^\s*<!--\s*docs-test:\s*golden\s+(\S+)\s*-->\s*$")
NOT_OUTPUT = re.compile(r"^\s*<!--\s*docs-test:\s*not-output\s+(.+?)\s*-->\s*$")
FENCE = re.compile(r"^\s*(`{3,})(\w*)\s*$")
# A block that shows gpucheck's output (its report, a message, a prompt running it) has a line
# like one of these; it must say which command printed it (output-of) or why it is not compared.
OUTPUT_LIKE = re.compile(r"^(\$ )?gpucheck[ :]|^## gpucheck report|^Root cause|^Result: |"
                         r"^# HELP gpucheck|^(PASS|FAIL|WARN|SKIP|ERROR)  |\"check_id\"|"
                         r"^\s*\"root_causes\"")
SHELL_LANGS = ("sh", "bash", "shell", "console")
CODE_TOKEN = re.compile(r"`([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)`")
# A token that names a file ("cuda.h", "report.json"), not a code.
FILE_SUFFIXES = {"h", "hpp", "c", "cpp", "cu", "json", "md", "txt", "xml", "toml", "yaml", "yml",
                 "sh", "py", "so", "gz", "tgz", "cfg", "conf", "log"}
# Other programs' names quoted in the docs: PyTorch's torch.backends.cudnn.benchmark.
FOREIGN = {"cudnn.benchmark"}

PROBLEMS = []
NOT_COMPARED = []  # output blocks marked not-output, with their reasons


def fenced(path):
    """(line number, language, the HTML comment lines right before it, body lines) of each fenced
    block; a fence of four backticks holds blocks of three."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, lang, start = m.group(1), m.group(2), i
        comments = []
        j = start - 1
        while j >= 0 and lines[j].strip().startswith("<!--"):
            comments.append(lines[j])
            j -= 1
        i += 1
        body = []
        while i < len(lines) and not re.match(rf"^\s*{ticks}\s*$", lines[i]):
            body.append(lines[i])
            i += 1
        i += 1
        found.append((start + 1, lang, comments, body))
    return found


def blocks(path):
    """(line number, language, skip reason or None, [(TEXT, reason)], body lines) of each fenced
    block of a shell language."""
    found = []
    for line_no, lang, comments, body in fenced(path):
        if lang not in SHELL_LANGS:
            continue
        skip, skip_commands = None, []
        for comment in comments:
            if SKIP_COMMAND.match(comment):
                skip_commands.append(SKIP_COMMAND.match(comment).groups())
            elif SKIP_BLOCK.match(comment):
                skip = SKIP_BLOCK.match(comment).group(1)
        found.append((line_no, lang, skip, skip_commands, body))
    return found


def command_lines(lang, body):
    text = "\n".join(body)
    if lang == "console":
        text = "\n".join(l.strip()[2:] for l in body if l.strip().startswith("$ "))
    text = re.sub(r"\\\n\s*", " ", text)
    return [l.strip() for l in text.split("\n") if l.strip() and not l.strip().startswith("#")]


def simple_commands(line):
    """The simple commands of a line: words up to each shell operator, comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    commands, current, redirect = [], [], False
    for t in tokens:
        if t in OPERATORS or set(t) <= set(";&|<>()"):
            if current:
                commands.append(current)
            current, redirect = [], t in (">", ">>", "<", "2>", "&>")
            continue
        if redirect:
            redirect = False  # the file name after a redirection
            continue
        current.append(t)
    if current:
        commands.append(current)
    return commands


def gpucheck_argv(words):
    """The gpucheck argv of a simple command (without the program), or None when its program is
    not gpucheck."""
    i = 0
    while i < len(words) and (words[i] in SHELL_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i])):
        i += 1
    if i < len(words) and (words[i] == "gpucheck" or words[i].endswith("/gpucheck")):
        return words[i + 1:]
    return None


def subcommand(argv):
    for w in argv:
        if not w.startswith("-"):
            return w if w in ("merge", "list", "explain", "snapshot", "matrix", "report") else None
        if w in ("--from-snapshot", "--config", "--output", "--format", "--only", "--skip", "--level",
                 "--duration", "--require", "--expect-gpus", "--fail-on", "--python", "--bundle"):
            return None  # an option with a value first: the run itself (values are not subcommands)
    return None


def scratch_dir(binary, source, snapshots):
    """The files and directories the documented commands name."""
    work = tempfile.mkdtemp(prefix="gpucheck-docs-")
    reports = os.path.join(work, "reports")
    os.makedirs(reports)
    for snap in snapshots:
        name = os.path.splitext(os.path.basename(snap))[0]
        r = subprocess.run([binary, "--from-snapshot", snap, "--json", "--no-redact"],
                           capture_output=True, text=True)
        with open(os.path.join(reports, name + ".json"), "w") as f:
            f.write(r.stdout)
    shutil.copytree(reports, os.path.join(work, "gpucheck-reports"))
    shutil.copy(os.path.join(reports, "h100x8_healthy.json"), os.path.join(work, "node1.json"))
    shutil.copy(os.path.join(reports, "degraded_hw.json"), os.path.join(work, "node2.json"))
    shutil.copy(os.path.join(reports, "h200_healthy.json"), os.path.join(work, "gpucheck-report.json"))
    for name in ("node7.json", "facts.json"):
        shutil.copy(os.path.join(source, "tests", "snapshots", "h100x8_healthy.json"), os.path.join(work, name))
    for name in ("examples", "deploy", "tests"):
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    return work


def check_commands(binary, source, docs, snapshots):
    work = scratch_dir(binary, source, snapshots)
    ran = runs = 0
    skipped, not_gpucheck = [], []
    try:
        for path in docs:
            rel = os.path.relpath(path, source)
            for line_no, lang, skip, skip_commands, body in blocks(path):
                used = set()
                for line in command_lines(lang, body):
                    for words in simple_commands(line):
                        argv = gpucheck_argv(words)
                        if argv is None:
                            if any("gpucheck" in w and not w.startswith("deploy/") for w in words) and \
                                    words[0] not in ("echo", "kubectl", "scontrol", "sbatch", "cmake"):
                                not_gpucheck.append(f"{rel}:{line_no}: {' '.join(words)}")
                            continue
                        shown = "gpucheck " + " ".join(argv)
                        if skip:
                            skipped.append(f"{rel}:{line_no}: {shown} ({skip})")
                            continue
                        reason = next((r for text, r in skip_commands if text in shown), None)
                        if reason:
                            used.update(t for t, r in skip_commands if t in shown)
                            skipped.append(f"{rel}:{line_no}: {shown} ({reason})")
                            continue
                        ran += 1
                        sub = subcommand(argv)
                        replays = snapshots if sub in PROBING and "--from-snapshot" not in argv else [None]
                        for snap in replays:
                            full = [binary] + (["--from-snapshot", snap] if snap else []) + argv
                            runs += 1
                            try:
                                r = subprocess.run(full, cwd=work, capture_output=True, text=True,
                                                   timeout=300, stdin=subprocess.DEVNULL)
                            except subprocess.TimeoutExpired:
                                PROBLEMS.append(f"{rel}:{line_no}: `{shown}` did not finish in 300 s")
                                continue
                            if r.returncode not in (0, 1):
                                on = f" on {os.path.basename(snap)}" if snap else ""
                                PROBLEMS.append(f"{rel}:{line_no}: `{shown}` exits {r.returncode}{on}: "
                                                f"{r.stderr.strip()[-400:]}")
                for text, reason in skip_commands:
                    if text not in used:
                        PROBLEMS.append(f'{rel}:{line_no}: skip-command "{text}" matches no command')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"commands: {ran} run ({runs} runs), {len(skipped)} skipped, "
          f"{len(not_gpucheck)} inside another program (not run)")
    for s in skipped:
        print(f"  skipped: {s}")
    for s in not_gpucheck:
        print(f"  not run: {s}")


def output_blocks(path, rel):
    """(line number, command, body lines) of each block marked output-of; a block that looks like
    gpucheck's output with neither output-of nor not-output is a problem."""
    found = []
    for line_no, lang, comments, body in fenced(path):
        marked = [OUTPUT_OF.match(c).group(1) for c in comments if OUTPUT_OF.match(c)]
        golden = [GOLDEN.match(c).group(1) for c in comments if GOLDEN.match(c)]
        if marked:
            found.append((line_no, marked[0], body))
        elif golden:
            found.append((line_no, "golden:" + golden[0], body))
        elif any(NOT_OUTPUT.match(c) for c in comments):
            NOT_COMPARED.append(f"{rel}:{line_no}: " +
                                [NOT_OUTPUT.match(c).group(1) for c in comments
                                 if NOT_OUTPUT.match(c)][0])
        elif lang not in SHELL_LANGS and any(OUTPUT_LIKE.search(l) for l in body):
            PROBLEMS.append(f"{rel}:{line_no}: shows gpucheck's output but names no command "
                            "(docs-test: output-of COMMAND, or not-output REASON)")
    return found


def comparable(line):
    """A line as compared: a duration sample without its value; the text report's first line
    and the Markdown report's header without their mode and time (a replay says "replay mode"
    where the run it shows said "quick mode"); a commit hash."""
    line = re.sub(r"^(\w+_duration_seconds(\{[^}]*\})?) \S+$", r"\1", line)
    line = re.sub(r"\(commit [0-9a-f]{12}\)", "(commit)", line)
    line = re.sub(r"^(gpucheck \S+), [a-z]+ mode, \S+, ", r"\1, ", line)  # the Markdown report's
    return re.sub(r"^(gpucheck \S+)  [a-z]+ mode, \S+$", r"\1", line)


def shown_lines(body):
    """The block's lines as compared: "..." and "# ..." lines (elisions) dropped, a "$ " prompt
    line joined with its continuation lines and returned as ("$", COMMAND)."""
    out, i = [], 0
    while i < len(body):
        line = body[i]
        i += 1
        if line.strip() == "..." or line.startswith("# ..."):
            continue
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i < len(body):
                command = command[:-1].rstrip() + " " + body[i].strip()
                i += 1
            out.append(("$", command))
            continue
        out.append(("", line))
    return out


def compare(rel, line_no, what, output, body, exit_code=None):
    """Every shown line is a line of `output`, in order; a prompt line names `what`'s command;
    "$ echo $?" and the line after it show `exit_code`."""
    output = [comparable(l) for l in output]
    at = 0
    status_next = False
    for kind, shown in shown_lines(body):
        if status_next:
            status_next = False
            if shown != str(exit_code):
                PROBLEMS.append(f"{rel}:{line_no}: `{what}` exits {exit_code}, not {shown}")
            continue
        if kind == "$" and shown == "echo $?" and exit_code is not None:
            status_next = True
            continue
        if kind == "$":
            # A golden file's block shows the command its test runs; else it is the marker's.
            if not what.startswith("golden:") and shown not in what:
                PROBLEMS.append(f"{rel}:{line_no}: shows `$ {shown}` but the output is "
                                f"`{what}`'s")
            continue
        try:
            at = output.index(comparable(shown), at) + 1
        except ValueError:
            PROBLEMS.append(f"{rel}:{line_no}: `{what}` does not print, in this order: {shown}")
            return


def check_outputs(binary, source, docs, snapshots):
    work = scratch_dir(binary, source, snapshots)
    checked = 0
    try:
        for path in docs:
            rel = os.path.relpath(path, source)
            for line_no, command, body in output_blocks(path, rel):
                if command.startswith("golden:"):
                    with open(os.path.join(source, command[7:]), encoding="utf-8") as f:
                        compare(rel, line_no, command, f.read().split("\n"), body)
                    checked += 1
                    continue
                words = shlex.split(command)
                env = dict(os.environ)
                while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                    key, value = words.pop(0).split("=", 1)
                    env[key] = value
                if not words or words[0] != "gpucheck":
                    PROBLEMS.append(f"{rel}:{line_no}: output-of names no gpucheck command")
                    continue
                r = subprocess.run([binary] + words[1:], cwd=work, env=env, capture_output=True,
                                   text=True, timeout=300, stdin=subprocess.DEVNULL)
                compare(rel, line_no, command, (r.stdout + r.stderr).split("\n"), body,
                        r.returncode)
                checked += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"outputs: {checked} shown outputs compared with their commands', "
          f"{len(NOT_COMPARED)} not compared")
    for line in NOT_COMPARED:
        print(f"  not compared: {line}")


def json_field_paths(values):
    """"parent.child" for every nested key pair of these JSON documents."""
    paths = set()

    def walk(value, parent):
        if isinstance(value, dict):
            for key, child in value.items():
                if parent is not None:
                    paths.add(f"{parent}.{key}")
                walk(child, key)
        elif isinstance(value, list):
            for child in value:
                walk(child, parent)

    for v in values:
        walk(v, None)
    return paths


def check_codes(binary, source, docs, snapshots):
    r = subprocess.run([binary, "explain", "all"], capture_output=True, text=True)
    codes = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    r = subprocess.run([binary, "list"], capture_output=True, text=True)
    checks = set(re.findall(r"^\s*([a-z][a-z0-9_]*\.[a-z0-9_.]+)\s", r.stdout, re.M))
    if not (len(codes) > 100 and len(checks) > 20):
        PROBLEMS.append(f"could not read the catalogue ({len(codes)} codes) or the checks ({len(checks)})")
        return
    documents = [json.load(open(s, encoding="utf-8")) for s in snapshots]
    # A report with every gate, whose results add the gates' check ids (gate.fail_on, ...).
    r = subprocess.run([binary, "--from-snapshot", snapshots[0], "--json", "--expect-gpus", "1",
                        "--require", "driver>=1", "--min", "h2d_gbps=1", "--fail-on", "warn"],
                       capture_output=True, text=True)
    report = json.loads(r.stdout)
    documents.append(report)
    checks |= {result["check_id"] for result in report["results"]}
    fields = json_field_paths(documents)
    areas = {c.split(".")[0] for c in codes | checks}
    quoted = 0
    for path in docs:
        rel = os.path.relpath(path, source)
        for line_no, line in enumerate(open(path, encoding="utf-8"), 1):
            for token in CODE_TOKEN.findall(line):
                area, name = token.split(".", 1)
                if area not in areas and area.rstrip("s") not in areas:
                    continue
                if name in FILE_SUFFIXES or token in FOREIGN:
                    continue
                quoted += 1
                if token not in codes and token not in checks and token not in fields:
                    PROBLEMS.append(f"{rel}:{line_no}: `{token}` is neither a finding code "
                                    "(gpucheck explain all) nor a check id (gpucheck list)")
    print(f"codes: {quoted} quoted code-like tokens checked against {len(codes)} codes and "
          f"{len(checks)} check ids")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--gpucheck", required=True)
    args = parser.parse_args()
    source = os.path.abspath(args.source)
    binary = os.path.abspath(args.gpucheck)
    docs = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    snapshots = sorted(glob.glob(os.path.join(source, "tests", "snapshots", "*.json")))
    check_commands(binary, source, docs, snapshots)
    check_outputs(binary, source, docs, snapshots)
    check_codes(binary, source, docs, snapshots)
    for p in PROBLEMS:
        print(p)
    print(f"{len(PROBLEMS)} problem(s)")
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
