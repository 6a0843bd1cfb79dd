#!/usr/bin/env python3
"""The CI examples (examples/ci/) and the fleet manifests (deploy/) are valid: YAML and TOML
parse, each file has the structure its tool requires (GitHub Actions, GitLab CI, Jenkins,
Kubernetes Job / DaemonSet / ConfigMap, node-problem-detector's custom plugin monitor), shell
scripts pass `bash -n` and shellcheck (when installed), and every gpucheck option they use exists
(the real binary's --help says so).

Kubernetes, besides structure: no pod relies on privileges hardened clusters remove (privileged,
hostPID/hostNetwork/hostIPC, added capabilities, privilege escalation); the DaemonSet holds no GPU;
the shipped ConfigMap's gates pass a healthy node whose image has no cuDNN and fail a broken one
(the real gpucheck replaying tests/snapshots/); the node-problem-detector plugin answers 0, 1 or 3
with one line for a healthy, a broken and an unreported node.

Usage: check_manifests.py --source REPO_ROOT [--gpucheck BINARY]
Exit 0 when everything holds; otherwise each problem is printed and the exit is 1.
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
import tomllib

import yaml

PROBLEMS = []

DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
REQUIREMENT = re.compile(r"^(driver|cuda|cudart|cudnn|cublas|nccl|toolkit|cc)(>=|<=|==|!=|>|<)[0-9][0-9.]*$")


def problem(where, text):
    PROBLEMS.append(f"{where}: {text}")


def check(condition, where, text):
    if not condition:
        problem(where, text)
    return condition


def load_yaml_documents(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError as e:
        problem(path, f"YAML does not parse: {e}")
        return []


# ---- gate config ---------------------------------------------------------------------------

def check_gate_config(text, where):
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        problem(where, f"TOML does not parse: {e}")
        return
    known = {"expect-gpus", "require", "min", "fail-on", "ignore", "quick", "json", "only", "skip",
             "timeout"}
    for key in config:
        check(key.replace("_", "-") in known, where, f"unknown key '{key}'")
    for req in config.get("require", []):
        check(REQUIREMENT.match(req), where, f"malformed requirement '{req}'")
    for metric, minimum in config.get("min", {}).items():
        check(re.match(r"^[a-z][a-z0-9_]*$", metric), where, f"bad metric name '{metric}'")
        check(isinstance(minimum, (int, float)) and minimum >= 0, where, f"bad minimum for {metric}")
    check(config.get("fail-on", "fail") in ("warn", "fail"), where, "fail-on must be warn or fail")


# ---- CI examples -----------------------------------------------------------------------------

def check_github_actions(path):
    docs = load_yaml_documents(path)
    if not check(len(docs) == 1, path, "expected one YAML document"):
        return
    wf = docs[0]
    # YAML 1.1 reads the key `on` as true.
    check("on" in wf or True in wf, path, "no 'on' trigger")
    jobs = wf.get("jobs")
    if not check(isinstance(jobs, dict) and jobs, path, "no jobs"):
        return
    for name, job in jobs.items():
        where = f"{path}: job {name}"
        check("runs-on" in job, where, "no runs-on")
        steps = job.get("steps")
        if not check(isinstance(steps, list) and steps, where, "no steps"):
            continue
        for i, step in enumerate(steps):
            check(("uses" in step) != ("run" in step), f"{where} step {i}",
                  "a step has exactly one of 'uses' and 'run'")
    # The gates and the tests are one job: two jobs may run on two runners.
    gate_jobs = [job for job in jobs.values()
                 if any("gpucheck --config" in s.get("run", "") for s in job.get("steps", []))]
    if not check(len(gate_jobs) == 1, path, "no single job runs gpucheck with gates"):
        return
    gate_job = gate_jobs[0]
    check("self-hosted" in gate_job.get("runs-on", []), path, "gpucheck job is not self-hosted")
    runs = " ".join(s.get("run", "") for s in gate_job.get("steps", []))
    check("gpucheck" in runs and "--config" in runs, path, "no gpucheck run with gates")
    check("run-gpu-tests.sh" in runs, path, "the tests do not run in the job that gates them")
    check("--format github" in runs, path, "no annotations (--format github)")
    check(">> \"$GITHUB_STEP_SUMMARY\"" in runs, path, "no report on the step summary")
    uploads = [s for s in gate_job.get("steps", []) if "upload-artifact" in s.get("uses", "")]
    if check(uploads, path, "reports are not uploaded as artifacts"):
        check(uploads[0].get("if") == "always()", path, "artifact upload must run always()")
        check("gpucheck-report.json" in uploads[0].get("with", {}).get("path", ""), path,
              "the JSON report is not among the artifacts")


def check_gitlab(path):
    docs = load_yaml_documents(path)
    if not check(len(docs) == 1, path, "expected one YAML document"):
        return
    ci = docs[0]
    stages = ci.get("stages", [])
    check(isinstance(stages, list) and stages, path, "no stages")
    reserved = {"stages", "variables", "default", "include", "workflow", "image", "services",
                "cache", "before_script", "after_script"}
    jobs = {k: v for k, v in ci.items() if k not in reserved and not k.startswith(".")}
    check(jobs, path, "no jobs")
    for name, job in jobs.items():
        where = f"{path}: job {name}"
        if not check(isinstance(job, dict), where, "a job is a mapping"):
            continue
        check(isinstance(job.get("script"), list) and all(isinstance(s, str) for s in job["script"]),
              where, "script must be a list of strings")
        check(job.get("stage") in stages, where, f"stage '{job.get('stage')}' is not in stages")
    gate_jobs = [job for job in jobs.values() if isinstance(job, dict) and
                 any("gpucheck --config" in line for line in job.get("script", []))]
    if not check(len(gate_jobs) == 1, path, "no single job runs gpucheck with gates"):
        return
    check(any("run-gpu-tests.sh" in line for line in gate_jobs[0]["script"]), path,
          "the tests do not run in the job that gates them")
    artifacts = gate_jobs[0].get("artifacts", {})
    check(artifacts.get("when") == "always", path, "artifacts must be kept when: always")
    check(artifacts.get("reports", {}).get("junit") == "gpucheck.xml", path,
          "artifacts:reports:junit must name gpucheck.xml")


def check_jenkinsfile(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check(text.count("{") == text.count("}"), path, "unbalanced braces")
    check(text.count("(") == text.count(")"), path, "unbalanced parentheses")
    check(re.search(r"^pipeline \{", text, re.M), path, "not a declarative pipeline")
    check(re.search(r"junit testResults: 'gpucheck.xml'", text), path, "no junit step")
    check("archiveArtifacts" in text, path, "reports are not archived")
    check("returnStatus: true" in text, path, "gpucheck's exit code is not read")


# ---- Kubernetes ------------------------------------------------------------------------------

def check_pod_privileges(spec, where):
    """Nothing a hardened cluster (Pod Security baseline, restricted) takes away: GPUs come from
    the NVIDIA runtime class and the device plugin, not from privileges."""
    for field in ("hostPID", "hostNetwork", "hostIPC"):
        check(not spec.get(field, False), where, f"{field}: true is not needed for GPUs")
    seccomp = spec.get("securityContext", {}).get("seccompProfile", {}).get("type")
    check(seccomp == "RuntimeDefault", where, "the pod's seccompProfile must be RuntimeDefault")
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        cw = f"{where}: container {c.get('name')}"
        sc = c.get("securityContext")
        if not check(isinstance(sc, dict), cw, "no securityContext"):
            continue
        check(sc.get("privileged", False) is False, cw, "privileged: true is not needed for GPUs")
        check(sc.get("allowPrivilegeEscalation") is False, cw, "allowPrivilegeEscalation must be false")
        caps = sc.get("capabilities", {})
        check("ALL" in caps.get("drop", []), cw, "capabilities must drop ALL")
        check(not caps.get("add"), cw, f"capabilities added: {caps.get('add')}")


def check_pod_spec(spec, where, kind, configmaps):
    containers = spec.get("containers")
    if not check(isinstance(containers, list) and containers, where, "no containers"):
        return
    check_pod_privileges(spec, where)
    volumes = {v.get("name"): v for v in spec.get("volumes", [])}
    for v in volumes.values():
        if "configMap" in v:
            check(v["configMap"].get("name") in configmaps, where,
                  f"volume {v['name']} names ConfigMap '{v['configMap'].get('name')}', not in deploy/k8s")
        if "hostPath" in v:
            check(str(v["hostPath"].get("path", "")).startswith("/"), where, "hostPath needs an absolute path")
    check(spec.get("runtimeClassName") == "nvidia", where, "runtimeClassName must be nvidia")
    check(isinstance(spec.get("nodeSelector"), dict) and spec["nodeSelector"], where,
          "no nodeSelector for GPU nodes")
    for c in containers:
        cw = f"{where}: container {c.get('name')}"
        check(DNS_1123.match(str(c.get("name", ""))), cw, "container name is not a DNS label")
        check(isinstance(c.get("image"), str) and c["image"], cw, "no image")
        check(isinstance(c.get("command"), list) and c["command"], cw, "no command")
        check(all(isinstance(a, str) for a in c.get("args", [])), cw, "args must be strings")
        for m in c.get("volumeMounts", []):
            check(m.get("name") in volumes, cw, f"volumeMount {m.get('name')} has no volume")
            check(str(m.get("mountPath", "")).startswith("/"), cw, "mountPath must be absolute")
        limits = c.get("resources", {}).get("limits", {})
        env = {e.get("name"): e for e in c.get("env", [])}
        gpu = limits.get("nvidia.com/gpu")
        if kind == "Job":
            check(isinstance(gpu, int) and gpu >= 1, cw, "a Job must request nvidia.com/gpu in its limits")
        else:
            # A DaemonSet that held a GPU would take it from the workloads for good.
            check(gpu is None and "nvidia.com/gpu" not in c.get("resources", {}).get("requests", {}),
                  cw, "a DaemonSet must not hold a GPU (nvidia.com/gpu)")
            check(env.get("NVIDIA_VISIBLE_DEVICES", {}).get("value") == "all", cw,
                  "no GPU access: NVIDIA_VISIBLE_DEVICES=all is how the runtime gives NVML the GPUs")
        args = " ".join(c.get("command", []) + c.get("args", []))
        check("gpucheck" in args and "--json" in args, cw, "does not run gpucheck --json")


def check_k8s(paths):
    objects = []
    for path in paths:
        for doc in load_yaml_documents(path):
            objects.append((path, doc))
    configmaps = {d.get("metadata", {}).get("name") for _, d in objects if d.get("kind") == "ConfigMap"}
    kinds = set()
    for path, obj in objects:
        kind = obj.get("kind")
        where = f"{path}: {kind} {obj.get('metadata', {}).get('name')}"
        for field in ("apiVersion", "kind", "metadata"):
            check(field in obj, where, f"no {field}")
        name = obj.get("metadata", {}).get("name", "")
        check(DNS_1123.match(str(name)) and len(name) <= 63, where, f"metadata.name '{name}' is not a DNS label")
        kinds.add(kind)
        if kind == "ConfigMap":
            check(obj.get("apiVersion") == "v1", where, "ConfigMap is v1")
            data = obj.get("data", {})
            check(isinstance(data, dict) and all(isinstance(v, str) for v in data.values()), where,
                  "data must map names to strings")
            if "gpucheck.toml" in data:
                check_gate_config(data["gpucheck.toml"], where)
        elif kind == "Job":
            check(obj.get("apiVersion") == "batch/v1", where, "Job is batch/v1")
            spec = obj.get("spec", {}).get("template", {}).get("spec", {})
            check(spec.get("restartPolicy") in ("Never", "OnFailure"), where,
                  "a Job's restartPolicy must be Never or OnFailure")
            check_pod_spec(spec, where, kind, configmaps)
        elif kind == "DaemonSet":
            check(obj.get("apiVersion") == "apps/v1", where, "DaemonSet is apps/v1")
            spec = obj.get("spec", {})
            selector = spec.get("selector", {}).get("matchLabels", {})
            labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
            check(selector and all(labels.get(k) == v for k, v in selector.items()), where,
                  "spec.selector.matchLabels must match the template's labels")
            pod = spec.get("template", {}).get("spec", {})
            check(pod.get("restartPolicy", "Always") == "Always", where, "a DaemonSet's pods restart Always")
            check_pod_spec(pod, where, kind, configmaps)
            check_daemonset_feeds_npd(pod, where)
            check_tolerates_every_taint(pod, where)
            check_privileged_patch(pod, os.path.join(os.path.dirname(path), "patches",
                                                     "daemonset-privileged.yaml"))
        else:
            problem(where, f"no structural check for kind {kind}")
    for wanted in ("Job", "DaemonSet", "ConfigMap"):
        check(wanted in kinds, "deploy/k8s", f"no {wanted} manifest")


# node-problem-detector reads what the DaemonSet writes here (deploy/k8s/gpucheck-npd-plugin.sh).
NPD_HOST_DIR = "/var/log/gpucheck"
NPD_REASON_FILE = NPD_HOST_DIR + "/reason"


def check_tolerates_every_taint(pod, where):
    """A remediation controller's NoExecute taint must not evict the checker from the node."""
    check(any(t.get("operator") == "Exists" and "key" not in t and "effect" not in t
              for t in pod.get("tolerations", [])), where,
          "the DaemonSet must tolerate every taint (operator: Exists, no key, no effect)")


def check_privileged_patch(pod, path):
    """The opt-in patch for the kernel log names the DaemonSet's container and makes it
    privileged in a way the API accepts (privileged needs allowPrivilegeEscalation true)."""
    docs = load_yaml_documents(path)
    check(len(docs) == 1, path, "one strategic-merge patch")
    if len(docs) != 1:
        return
    containers = docs[0].get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
    names = {c.get("name") for c in pod.get("containers", [])}
    check(len(containers) == 1 and containers[0].get("name") in names, path,
          f"the patch must name the DaemonSet's container ({names})")
    if containers:
        context = containers[0].get("securityContext", {})
        check(context.get("privileged") is True and context.get("allowPrivilegeEscalation") is True,
              path, "privileged: true with allowPrivilegeEscalation: true")


def check_daemonset_feeds_npd(pod, where):
    """The DaemonSet writes gpucheck's one-line reason where the NPD plugin reads it."""
    mounts = {}
    for v in pod.get("volumes", []):
        if "hostPath" in v:
            mounts[v["name"]] = v["hostPath"].get("path")
    for c in pod.get("containers", []):
        script = " ".join(c.get("command", []) + c.get("args", []))
        for m in c.get("volumeMounts", []):
            if mounts.get(m.get("name")) == NPD_HOST_DIR:
                target = f"reason:{m['mountPath']}/reason"
                check(target in script and "--quick" in script, where,
                      f"the DaemonSet must run gpucheck --quick --output {target} (read by NPD)")
                return
    problem(where, f"no hostPath {NPD_HOST_DIR} for node-problem-detector")


def check_npd_monitor(path, k8s_dir):
    """node-problem-detector's custom plugin monitor: the fields its custom plugin reads."""
    try:
        with open(path, encoding="utf-8") as f:
            monitor = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        problem(path, f"not JSON: {e}")
        return
    check(monitor.get("plugin") == "custom", path, 'plugin must be "custom"')
    check(isinstance(monitor.get("source"), str) and monitor["source"], path, "no source")
    config = monitor.get("pluginConfig", {})
    for key in ("invoke_interval", "timeout"):
        check(re.match(r"^[0-9]+(s|m|h)$", str(config.get(key, ""))), path, f"pluginConfig.{key} is not a duration")
    check(isinstance(config.get("max_output_length"), int) and config["max_output_length"] >= 200, path,
          "max_output_length must hold gpucheck's 200-byte reason")
    conditions = {c.get("type"): c for c in monitor.get("conditions", [])}
    check("GPUProblem" in conditions, path, "no GPUProblem condition")
    for c in conditions.values():
        check(all(c.get(k) for k in ("type", "reason", "message")), path, f"condition {c} lacks a field")
    rules = monitor.get("rules", [])
    check(any(r.get("type") == "permanent" and r.get("condition") == "GPUProblem" for r in rules), path,
          "no permanent rule setting GPUProblem")
    for r in rules:
        check(r.get("type") in ("temporary", "permanent"), path, f"rule type {r.get('type')}")
        check(r.get("reason"), path, "a rule has no reason")
        if r.get("type") == "permanent":
            check(r.get("condition") in conditions, path, f"rule condition {r.get('condition')} is not declared")
        plugin = os.path.join(k8s_dir, os.path.basename(str(r.get("path", ""))))
        check(os.access(plugin, os.X_OK), path, f"rule path {r.get('path')}: no such script in deploy/k8s")


def check_npd_plugin(binary, source, plugin, gates_text, where):
    """The plugin on what the DaemonSet's gpucheck writes: 0 and one line for a healthy node, 1 and
    the reason for a broken one, 3 (unknown) when there is no report or it is stale."""
    with tempfile.TemporaryDirectory() as work:
        gates = os.path.join(work, "gates.toml")
        with open(gates, "w") as f:
            f.write(gates_text)

        def plugin_on(snapshot, name, age_s=0):
            reason = os.path.join(work, name)
            if snapshot is not None:
                r = subprocess.run([binary, "--quick", "--config", gates, "--from-snapshot", snapshot,
                                    "--json", "--output", f"reason:{reason}"], capture_output=True, text=True)
                check(r.returncode in (0, 1), where, f"gpucheck exit {r.returncode}: {r.stderr}")
                if age_s:
                    old = os.path.getmtime(reason) - age_s
                    os.utime(reason, (old, old))
            env = dict(os.environ, GPUCHECK_REASON_FILE=reason)
            r = subprocess.run([plugin], env=env, capture_output=True, text=True, timeout=30)
            check(r.stdout.count("\n") == 1 and len(r.stdout) <= 201, where,
                  f"the plugin must print one line of at most 200 bytes, printed {r.stdout!r}")
            return r.returncode, r.stdout.strip()

        healthy = healthy_image_snapshot(source, work)
        code, line = plugin_on(healthy, "healthy.reason")
        check(code == 0, where, f"NPD plugin on a healthy node: exit {code} ({line}), expected 0")
        broken = os.path.join(source, "tests", "snapshots", "degraded_hw.json")
        code, line = plugin_on(broken, "broken.reason")
        check(code == 1 and line.startswith("gpucheck: gpu.ecc_uncorrected GPU 1 ("), where,
              f"NPD plugin on a broken node: exit {code} ({line}), expected 1 and the reason")
        # gpucheck blind (no driver libraries reached its pod): unknown, never OK (issue 36 item 3).
        blind = os.path.join(source, "tests", "snapshots", "no_driver.json")
        code, line = plugin_on(blind, "blind.reason")
        check(code == 3 and line.startswith("gpucheck-blind: cannot see the GPUs or the driver: "),
              where, f"NPD plugin on a node gpucheck cannot see: exit {code} ({line}), expected 3")
        code, line = plugin_on(None, "missing.reason")
        check(code == 3, where, f"NPD plugin without a report: exit {code} ({line}), expected 3")
        code, line = plugin_on(broken, "stale.reason", age_s=4 * 3600)
        check(code == 3, where, f"NPD plugin on a 4-hour-old report: exit {code} ({line}), expected 3")


def healthy_image_snapshot(source, work):
    """A healthy node as the gpucheck image sees it: tests/snapshots/h100x8_healthy.json inside a
    Kubernetes container whose image has gpucheck only (no cuDNN, cuBLAS or NCCL)."""
    with open(os.path.join(source, "tests", "snapshots", "h100x8_healthy.json"), encoding="utf-8") as f:
        snapshot = json.load(f)
    for library in snapshot["libraries"]:
        if library["family"] in ("cudnn", "cublas", "nccl"):
            name = library["load"]["name"]
            library["copies"] = []
            library["cudnn"] = None
            library["load"] = {"error": f"{name}: cannot open shared object file: No such file or directory",
                               "loaded": False, "missing_symbols": [], "name": name, "path": "",
                               "real_path": "", "version": "", "version_raw": 0}
    snapshot["environment"]["container"] = {"evidence": ["/proc/1/cgroup names kubepods"],
                                            "kind": "kubernetes", "nvidia_mounts": []}
    snapshot["environment"]["variables"].update({"NVIDIA_VISIBLE_DEVICES": "all",
                                                 "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"})
    path = os.path.join(work, "healthy_image.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(snapshot, f)
    return path


def check_configmap_gates(binary, source, toml_text, where):
    """The DaemonSet's run with the ConfigMap's gates: a healthy node whose image has no cuDNN
    passes (its twin without the gates shows that cuDNN is indeed reported missing), a broken node
    fails."""
    with tempfile.TemporaryDirectory() as work:
        gates = os.path.join(work, "gates.toml")
        with open(gates, "w") as f:
            f.write(toml_text)
        healthy = healthy_image_snapshot(source, work)
        r = subprocess.run([binary, "--quick", "--from-snapshot", healthy, "--json"], capture_output=True, text=True)
        codes = re.findall(r'"code": "([a-z_.0-9]+)"', r.stdout)
        check("lib.cudnn_missing" in codes, where, f"the image without cuDNN should report lib.cudnn_missing: {codes}")
        r = subprocess.run([binary, "--quick", "--config", gates, "--from-snapshot", healthy, "--json"],
                           capture_output=True, text=True)
        codes = re.findall(r'"code": "([a-z_.0-9]+)"', r.stdout)
        check(r.returncode == 0, where,
              f"a healthy node without cuDNN fails the ConfigMap's gates (exit {r.returncode}): "
              f"{codes} {r.stderr.strip()}")
        broken = os.path.join(source, "tests", "snapshots", "degraded_hw.json")
        r = subprocess.run([binary, "--quick", "--config", gates, "--from-snapshot", broken, "--json"],
                           capture_output=True, text=True)
        check(r.returncode == 1, where, f"a broken node passes the ConfigMap's gates (exit {r.returncode})")


# ---- scripts and gpucheck options --------------------------------------------------------------

def check_scripts(paths, executable=True):
    """bash -n and shellcheck; `executable`: a program (not a file NHC sources)."""
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        print("note: shellcheck not installed; only bash -n is run")
    for path in paths:
        r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
        check(r.returncode == 0, path, f"bash -n: {r.stderr.strip()}")
        if shellcheck:
            r = subprocess.run([shellcheck, "-s", "bash", path], capture_output=True, text=True)
            check(r.returncode == 0, path, f"shellcheck:\n{r.stdout}")
        if executable:
            check(os.access(path, os.X_OK), path, "not executable")


def gpucheck_invocations(text):
    """Options given to gpucheck in a file: the --flags after the word gpucheck on a line
    (continuation lines included)."""
    text = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in text.splitlines():
        for m in re.finditer(r"(?:^|[\s/\"'(`])gpucheck((?:\s+[^\s|;&>#]+)*)", line):
            if line[:m.start() + 1].rstrip().endswith(("-n", "--namespace", "create namespace")):
                continue  # the Kubernetes namespace, not the program
            words = m.group(1).split()
            sub = "merge" if words[:1] == ["merge"] else ""
            for w in words:
                option = re.match(r"--[a-z0-9][a-z0-9-]*", w)
                if option:
                    found.append((sub, option.group(0)))
    return found


def check_options(paths, binary):
    helps = {}
    for sub in ("", "merge"):
        cmd = [binary] + ([sub] if sub else []) + ["--help"]
        helps[sub] = subprocess.run(cmd, capture_output=True, text=True).stdout
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for sub, option in gpucheck_invocations(text):
            check(re.search(re.escape(option) + r"\b", helps[sub]), path,
                  f"gpucheck {sub} has no option {option}".replace("  ", " "))


def check_config_with_binary(binary, source, toml_text, where):
    """The real gpucheck reads the gate config: a replay with it exits 0 or 1, never 2."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(toml_text)
        name = f.name
    try:
        snapshot = os.path.join(source, "tests", "snapshots", "h200_healthy.json")
        r = subprocess.run([binary, "--config", name, "--from-snapshot", snapshot, "--json"],
                           capture_output=True, text=True)
        check(r.returncode in (0, 1), where, f"gpucheck refuses the config (exit {r.returncode}): {r.stderr}")
    finally:
        os.unlink(name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--gpucheck")
    args = parser.parse_args()
    src = args.source
    ci = os.path.join(src, "examples", "ci")
    k8s = sorted(glob.glob(os.path.join(src, "deploy", "k8s", "*.yaml")))
    scripts = sorted(glob.glob(os.path.join(src, "deploy", "*", "*.sh")) +
                     glob.glob(os.path.join(src, "deploy", "*", "*.sbatch")))

    check_github_actions(os.path.join(ci, "github-actions.yml"))
    check_gitlab(os.path.join(ci, ".gitlab-ci.yml"))
    check_jenkinsfile(os.path.join(ci, "Jenkinsfile"))
    with open(os.path.join(ci, "gpucheck.toml"), encoding="utf-8") as f:
        toml_text = f.read()
    check_gate_config(toml_text, "examples/ci/gpucheck.toml")
    check(len(k8s) >= 3, "deploy/k8s", "expected the Job, DaemonSet and ConfigMap manifests")
    check_k8s(k8s)
    npd_monitor = os.path.join(src, "deploy", "k8s", "npd-gpucheck-monitor.json")
    npd_plugin = os.path.join(src, "deploy", "k8s", "gpucheck-npd-plugin.sh")
    check_npd_monitor(npd_monitor, os.path.dirname(npd_monitor))
    check(len(scripts) >= 2, "deploy/slurm", "expected the Slurm scripts")
    check_scripts(scripts)
    nhc = sorted(glob.glob(os.path.join(src, "deploy", "slurm", "nhc", "*.nhc")))
    check(len(nhc) == 1, "deploy/slurm/nhc", "expected the NHC check")
    check_scripts(nhc, executable=False)
    scripts += nhc
    if args.gpucheck:
        files = [os.path.join(ci, n) for n in ("github-actions.yml", ".gitlab-ci.yml", "Jenkinsfile")]
        files += k8s + scripts + [os.path.join(src, "docs", n) for n in ("ci.md", "fleet.md")]
        check_options([f for f in files if os.path.exists(f)], args.gpucheck)
        check_config_with_binary(args.gpucheck, src, toml_text, "examples/ci/gpucheck.toml")
        for path, doc in [(p, d) for p in k8s for d in load_yaml_documents(p)]:
            if doc.get("kind") == "ConfigMap" and "gpucheck.toml" in doc.get("data", {}):
                check_config_with_binary(args.gpucheck, src, doc["data"]["gpucheck.toml"], path)
                check_configmap_gates(args.gpucheck, src, doc["data"]["gpucheck.toml"], path)
                check_npd_plugin(args.gpucheck, src, npd_plugin, doc["data"]["gpucheck.toml"], npd_plugin)

    for p in PROBLEMS:
        print(p)
    checked = len(k8s) + len(scripts) + 5
    print(f"{checked} files checked, {len(PROBLEMS)} problem(s)")
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
