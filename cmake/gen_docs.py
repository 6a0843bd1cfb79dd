#!/usr/bin/env python3
"""Generate gpucheck's man page and shell completions from the built binary's own --help.

The options and subcommands come from CLI11's help output (`gpucheck --help`, `gpucheck SUB
--help`), so the man page gpucheck(1) and the bash, zsh and fish completions list exactly what
`--help` lists. Written to OUTDIR: gpucheck.1, gpucheck.bash, _gpucheck (zsh), gpucheck.fish.
"""

import json
import re
import subprocess
import sys

OPTION = re.compile(r"^  (-\S+?)(?:\s+(\S.*?))?(?:\s{2,}(\S.*))?$")


def help_text(binary, *args):
    return subprocess.run([binary, *args, "--help"], capture_output=True, text=True,
                          check=True).stdout


def argument_name(arg):
    """CLI11's type text as a person writes it: "FLOAT:SECONDS" -> "SECONDS", "INT:INT in [0 -
    4096]" -> "N", "TEXT:{auto,always,never}" -> "auto|always|never", "TEXT" -> "VALUE"; a
    trailing "..." (repeatable) is kept."""
    repeat = arg.endswith("...")
    arg = arg.removesuffix("...").strip()
    if not arg:
        return ""
    kind, _, shown = arg.partition(":")
    if shown.startswith("{") and shown.endswith("}"):
        shown = shown[1:-1].replace(",", "|")
    elif shown.startswith(kind) or not shown:
        shown = {"INT": "N", "UINT": "N", "FLOAT": "NUMBER"}.get(kind, "VALUE")
    return shown + (" ..." if repeat else "")


def parse(text):
    """(description, [(names, argument, help)], [(subcommand, help)], [(positional, help)])."""
    lines = text.splitlines()
    description = lines[0].strip() if lines else ""
    options, subcommands, positionals = [], [], []
    section = None
    for line in lines[1:]:
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
            continue
        if not line.strip():
            continue
        if section == "Options":
            match = OPTION.match(line)
            if match and line.startswith("  -"):
                names_and_arg = line[2:].split("  ")[0].strip()
                rest = line[2 + len(names_and_arg):].strip()
                names, _, arg = names_and_arg.partition(" ")
                # "-v,--verbose Excludes: --quiet": CLI11's note, not an argument.
                if arg.startswith("Excludes:") or arg.startswith("Needs:"):
                    arg = ""
                options.append([names.split(","), argument_name(arg.strip()), rest])
            elif options and line.startswith("     "):
                continuation = line.strip()
                if options[-1][2]:
                    options[-1][2] += " " + continuation
                else:
                    options[-1][2] = continuation
        elif section == "Subcommands":
            name, _, rest = line.strip().partition(" ")
            subcommands.append((name, rest.strip()))
        elif section == "Positionals":
            name, _, rest = line.strip().partition(" ")
            positionals.append((name, rest.strip()))
    return description, options, subcommands, positionals


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text)


def man_page(version, main, subs):
    description, options, subcommands, _ = main
    out = [f'.TH GPUCHECK 1 "" "gpucheck {version}" "User Commands"',
           ".SH NAME", "gpucheck \\- " + roff(description.split(": ", 1)[-1]),
           ".SH SYNOPSIS", ".B gpucheck", "[\\fIOPTIONS\\fR] [\\fISUBCOMMAND\\fR]",
           ".SH DESCRIPTION", roff(description),
           "gpucheck probes the driver, libraries and GPUs, judges them against its compatibility "
           "data, proves them with small verified GPU kernels and reports what is wrong, why, and "
           "what to do.",
           ".SH OPTIONS"]
    for names, arg, text in options:
        out.append(".TP")
        label = ", ".join(f"\\fB{roff(n)}\\fR" for n in names)
        out.append(label + (f" \\fI{roff(arg)}\\fR" if arg else ""))
        out.append(roff(text))
    out.append(".SH SUBCOMMANDS")
    for name, text in subcommands:
        _, sub_options, _, positionals = subs[name]
        out.append(".TP")
        usage = f"\\fBgpucheck {name}\\fR"
        usage += "".join(f" \\fI{roff(p)}\\fR" for p, _ in positionals)
        out.append(usage)
        out.append(roff(text))
        for names, arg, sub_text in sub_options:
            if names == ["-h", "--help"]:
                continue
            out.append(".RS")
            out.append(".TP")
            label = ", ".join(f"\\fB{roff(n)}\\fR" for n in names)
            out.append(label + (f" \\fI{roff(arg)}\\fR" if arg else ""))
            out.append(roff(sub_text))
            out.append(".RE")
    out.append(".SH EXIT STATUS")
    for code, text in EXIT_STATUS:
        out += [".TP", f"\\fB{code}\\fR", roff(text)]
    out.append(".SH ENVIRONMENT")
    for name, text in ENVIRONMENT:
        out += [".TP", f"\\fB{name}\\fR", roff(text)]
    out.append(".SH EXAMPLES")
    for command, text in EXAMPLES:
        out += [".TP", f"\\fB{roff(command)}\\fR", roff(text)]
    out += [".SH FILES", ("/usr/share/doc/gpucheck/ \\- the documentation, report.schema.json and "
             "report.consumer.schema.json"),
            ".SH SEE ALSO", "nvidia\\-smi(1)", ""]
    return "\n".join(out)


# Written for people (docs/exit-codes.md has the whole story); --help cannot say these.
EXIT_STATUS = [
    ("0", "every check passed, warned or was skipped (with --format reason: nothing drains)"),
    ("1", "a check or a gate failed or errored (with --format reason: the node should drain)"),
    ("2", "a usage error or unreadable input: an unknown option (the nearest is named), a "
          "pattern of --only or --skip that matches no check, a bad config file"),
    ("3", "gpucheck itself failed, or could not write its report"),
    ("130, 143", "stopped by SIGINT (Ctrl-C) or SIGTERM: the report of what ran is still "
                 "written; a second signal ends it at once"),
]
ENVIRONMENT = [
    ("NO_COLOR", "set, even empty: no colour in the text report (unless --color always)"),
    ("CLICOLOR_FORCE", "set, not empty and not 0: colour even when stdout is not a terminal"),
    ("COLUMNS", "the width the text report wraps at when stdout is not a terminal (else 80)"),
    ("CUDA_VISIBLE_DEVICES", "the GPUs CUDA shows, and so the GPUs the GPU checks test"),
    ("GPUCHECK_TRACE", "set, not empty and not 0: a line on stderr per child process and stage, "
                       "with times"),
    ("SOURCE_DATE_EPOCH", "the report's time (seconds since 1970): reproducible reports"),
    ("GPUCHECK_SYSROOT", "read /proc, /sys, /dev and /etc under this directory (testing)"),
]
EXAMPLES = [
    ("gpucheck", "probe, judge and run the short GPU checks; a text report"),
    ("gpucheck --quick", "the passive checks only, about a fifth of a second, no GPU work"),
    ("gpucheck --json > report.json", "the report for a CI gate or a program"),
    ("gpucheck --expect-gpus 8 --require 'driver>=580' --fail-on warn",
     "a CI gate: fail unless eight GPUs, driver 580 or newer and no warning"),
    ("gpucheck report --output ticket.md", "a redacted Markdown report for a support ticket"),
    ("gpucheck --quick --format reason", "one line naming what should drain this node, or none"),
    ("gpucheck --level long --duration 120", "adds the memory test and the sustained GEMM burn"),
    ("gpucheck explain gpu.ecc_uncorrected", "what a finding code means and what to do"),
]


def long_names(options):
    return [n for names, _, _ in options for n in names]


def option_values(binary):
    """What some options and `explain` take (issue 36 item 10): check ids (and their leading
    words) for --only and --skip, finding codes for --ignore, codes and ids for explain, and the
    fixed values of --format, --level, --color and --fail-on."""
    ids = [c["id"] for c in json.loads(subprocess.run([binary, "--json", "list"],
                                                      capture_output=True, text=True,
                                                      check=True).stdout)]
    codes = [line.split()[0] for line in subprocess.run([binary, "explain", "all"],
                                                        capture_output=True, text=True,
                                                        check=True).stdout.splitlines()
             if line.strip()]
    areas = sorted({i.split(".")[0] for i in ids})
    return {"--only": areas + ids, "--skip": areas + ids, "--ignore": codes,
            "explain": codes + ids,
            "--format": ["text", "json", "markdown", "junit", "prometheus", "github", "reason"],
            "--level": ["quick", "standard", "long"], "--color": ["auto", "always", "never"],
            "--fail-on": ["warn", "fail"]}


def bash_completion(main, subs, values):
    _, options, subcommands, _ = main
    lines = ["# bash completion for gpucheck (generated from gpucheck --help)", "_gpucheck() {",
             '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" sub="" i',
             '  case "$prev" in']
    for option, words in values.items():
        if option.startswith("--"):
            lines.append(f'  {option}) mapfile -t COMPREPLY < <(compgen -W "{" ".join(words)}" '
                         '-- "$cur"); return ;;')
    lines += ['  explain) mapfile -t COMPREPLY < <(compgen -W "'
              + " ".join(values["explain"]) + '" -- "$cur"); return ;;', "  esac",
             "  for ((i = 1; i < COMP_CWORD; i++)); do",
             '    case "${COMP_WORDS[i]}" in',
             "    " + "|".join(n for n, _ in subcommands) + ') sub="${COMP_WORDS[i]}" ;;',
             "    esac", "  done", '  local words', '  case "$sub" in']
    for name, _ in subcommands:
        lines.append(f"  {name}) words=\"{' '.join(long_names(subs[name][1]))}\" ;;")
    lines.append(f"  *) words=\"{' '.join(long_names(options) + [n for n, _ in subcommands])}\" ;;")
    lines += ["  esac", '  mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")', "}",
              "complete -o default -F _gpucheck gpucheck", ""]
    return "\n".join(lines)


def zsh_quote(text):
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh_spec(name, arg, text, values):
    """One _arguments spec: a flag, or an option with its value: the fixed words it takes, or a
    file where it takes a path, else any word."""
    spec = f"{name}[{zsh_quote(text)}]"
    if name == "--format":
        # Each command's own formats, as its help names them (matrix: text, json, markdown).
        known = values["--format"]
        words = [w for w in dict.fromkeys(re.findall(r"[a-z]+", text)) if w in known]
        return f"'{spec}:format:({' '.join(words)})'"
    if name in values:
        return f"'{spec}:value:({' '.join(values[name])})'"
    if name in ("--config", "--matrix", "--from-snapshot", "--bundle"):
        return f"'{spec}:file:_files'"
    if arg in ("", None):
        return f"'{spec}'"
    label = zsh_quote(arg.split()[0].lower())
    if arg.startswith("VALUE"):
        return f"'{spec}:{label}:_files'"
    return f"'{spec}:{label}: '"


def zsh_completion(main, subs, values):
    _, options, subcommands, _ = main
    lines = ["#compdef gpucheck", "# zsh completion for gpucheck (generated from gpucheck --help)",
             "_gpucheck() {", "  local -a subcommands", "  subcommands=("]
    lines += [f"    '{name}:{zsh_quote(text)}'" for name, text in subcommands]
    lines += ["  )", "  if (( CURRENT > 2 )) && (( ${subcommands[(I)${words[2]}:*]} )); then",
              "    case ${words[2]} in"]
    for name, _ in subcommands:
        specs = " ".join(zsh_spec(n, arg, text, values) for names, arg, text in subs[name][1]
                         for n in names)
        rest = (f"'1:code:({' '.join(values['explain'])})'" if name == "explain"
                else "'*:file:_files'")
        lines.append(f"    {name}) _arguments {specs} {rest} ;;")
    lines += ["    esac", "    return", "  fi"]
    specs = " ".join(zsh_spec(n, arg, text, values) for names, arg, text in options
                     for n in names)
    lines += [f"  _arguments {specs} '1: :{{_describe command subcommands}}' '*:file:_files'", "}",
              '_gpucheck "$@"', ""]
    return "\n".join(lines)


def fish_completion(main, subs, values):
    _, options, subcommands, _ = main
    lines = ["# fish completion for gpucheck (generated from gpucheck --help)"]
    names = " ".join(n for n, _ in subcommands)

    def option_line(flags, text, condition):
        parts = []
        for flag in flags:
            if flag.startswith("--"):
                parts.append(f"-l {flag[2:]}")
            else:
                parts.append(f"-s {flag[1:]}")
        text = text.replace("'", "\\'")
        return f"complete -c gpucheck -n '{condition}' {' '.join(parts)} -d '{text}'"

    for flags, _, text in options:
        lines.append(option_line(flags, text, f"not __fish_seen_subcommand_from {names}"))
    for name, text in subcommands:
        text = text.replace("'", "\\'")
        lines.append(f"complete -c gpucheck -n 'not __fish_seen_subcommand_from {names}' "
                     f"-a {name} -d '{text}'")
        for flags, _, sub_text in subs[name][1]:
            lines.append(option_line(flags, sub_text, f"__fish_seen_subcommand_from {name}"))
    # The values some options and explain take: fish adds these to the options' lines above.
    for option, words in values.items():
        if option.startswith("--"):
            lines.append(f"complete -c gpucheck -l {option[2:]} -x -a '{' '.join(words)}'")
    lines.append("complete -c gpucheck -n '__fish_seen_subcommand_from explain' -x -a '"
                 + " ".join(values["explain"]) + "'")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_docs.py GPUCHECK OUTDIR")
    binary, outdir = sys.argv[1], sys.argv[2]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    main_help = parse(help_text(binary))
    subs = {name: parse(help_text(binary, name)) for name, _ in main_help[2]}
    values = option_values(binary)
    files = {"gpucheck.1": man_page(version, main_help, subs),
             "gpucheck.bash": bash_completion(main_help, subs, values),
             "_gpucheck": zsh_completion(main_help, subs, values),
             "gpucheck.fish": fish_completion(main_help, subs, values)}
    for name, text in files.items():
        with open(f"{outdir}/{name}", "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
