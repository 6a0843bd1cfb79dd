#include "platform/python_child.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace gpucheck::platform {

namespace {

constexpr std::string_view k_query = R"PY(import json, os, sys
r = {"version": "%d.%d.%d" % tuple(sys.version_info[:3]), "prefix": sys.prefix,
     "base_prefix": getattr(sys, "base_prefix", sys.prefix), "executable": sys.executable,
     "site_packages": [p for p in sys.path
                       if p.rstrip("/").endswith(("site-packages", "dist-packages"))]}
os.write(int(os.environ.get("GPUCHECK_RESULT_FD", "3")), json.dumps(r).encode())
)PY";

// Shared head and tail of the import scripts; the body runs inside `try:` (4-space indent).
constexpr std::string_view k_import_head = R"PY(import json, os, sys, time
KEYS = ("libcuda.so", "libcudart", "libcublas", "libcudnn", "libnccl", "libnvrtc",
        "libtorch_cuda", "xla_cuda_plugin", "libtensorflow")
def mapped():
    seen = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if any(k in os.path.basename(path) for k in KEYS):
                        seen.add(path)
    except OSError:
        pass
    return sorted(seen)
r = {}
t0 = time.time()
try:
)PY";

constexpr std::string_view k_import_tail = R"PY(except BaseException as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
r["mapped_libraries"] = mapped()
r["seconds"] = round(time.time() - t0, 3)
os.write(int(os.environ.get("GPUCHECK_RESULT_FD", "3")), json.dumps(r).encode())
)PY";

constexpr std::string_view k_torch = R"PY(    import torch
    r["version"] = torch.__version__
    r["gpu_available"] = bool(torch.cuda.is_available())
    r["device_count"] = int(torch.cuda.device_count())
    r["arch_list"] = list(torch.cuda.get_arch_list())
    v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    r["cudnn_version"] = None if v is None else str(v)
    if r["gpu_available"]:
        x = torch.arange(64, dtype=torch.float32, device="cuda")
        r["op_ok"] = float((x * 2).sum().item()) == 4032.0
)PY";

constexpr std::string_view k_tensorflow = R"PY(    import tensorflow as tf
    r["version"] = tf.__version__
    gpus = tf.config.list_physical_devices("GPU")
    r["gpu_available"] = len(gpus) > 0
    r["device_count"] = len(gpus)
    info = tf.sysconfig.get_build_info()
    r["cudnn_version"] = info.get("cudnn_version")
    r["arch_list"] = list(info.get("cuda_compute_capabilities") or [])
    if gpus:
        with tf.device("/GPU:0"):
            y = tf.reduce_sum(tf.range(64, dtype=tf.float32) * 2)
        r["op_ok"] = float(y.numpy()) == 4032.0
)PY";

constexpr std::string_view k_jax = R"PY(    import jax, jax.numpy as jnp
    r["version"] = jax.__version__
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    r["gpu_available"] = len(gpus) > 0
    r["device_count"] = len(gpus)
    if gpus:
        x = jax.device_put(jnp.arange(64, dtype=jnp.float32), gpus[0])
        r["op_ok"] = float((x * 2).sum()) == 4032.0
)PY";

// ONNX Runtime: its providers, then one Add over 64 floats on the CUDA provider, in a model
// written here as protobuf bytes (ir 7, opset 13), so that the onnx package is not needed. A
// session that silently fell back to the CPU provider is no GPU.
constexpr std::string_view k_onnxruntime = R"PY(    import onnxruntime as ort
    r["version"] = ort.__version__
    providers = list(ort.get_available_providers())
    r["gpu_available"] = "CUDAExecutionProvider" in providers
    if r["gpu_available"]:
        def v(n):
            b = b""
            while True:
                c, n = n & 0x7F, n >> 7
                b += bytes([c | (0x80 if n else 0)])
                if not n:
                    return b
        def f(num, payload):
            if isinstance(payload, int):
                return v(num << 3) + v(payload)
            return v(num << 3 | 2) + v(len(payload)) + payload
        tensor = f(1, 1) + f(2, f(1, f(1, 64)))
        vi = lambda n: f(1, n) + f(2, f(1, tensor))
        node = f(1, b"x") + f(1, b"x") + f(2, b"y") + f(4, b"Add")
        graph = f(1, node) + f(2, b"g") + f(11, vi(b"x")) + f(12, vi(b"y"))
        model = f(1, 7) + f(8, f(2, 13)) + f(7, graph)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        sess = ort.InferenceSession(model, sess_options=opts, providers=["CUDAExecutionProvider"])
        if "CUDAExecutionProvider" in sess.get_providers():
            import numpy as np
            y = sess.run(None, {"x": np.arange(64, dtype=np.float32)})[0]
            r["op_ok"] = float(y.sum()) == 4032.0
        else:
            r["gpu_available"] = False
)PY";

// TensorRT: a builder, which initialises CUDA on the GPU (building an engine takes seconds).
constexpr std::string_view k_tensorrt = R"PY(    import tensorrt as trt
    r["version"] = trt.__version__
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    r["gpu_available"] = builder is not None
)PY";

constexpr std::string_view k_cupy = R"PY(    import cupy
    r["version"] = cupy.__version__
    n = cupy.cuda.runtime.getDeviceCount()
    r["gpu_available"] = n > 0
    r["device_count"] = n
    if n > 0:
        x = cupy.arange(64, dtype=cupy.float32)
        r["op_ok"] = float((x * 2).sum()) == 4032.0
)PY";

/// The import script's body of each framework the probes find (FrameworkInstall::name).
struct ImportScript {
  std::string_view framework;
  std::string_view body;
};
constexpr ImportScript k_import_scripts[] = {
    {"pytorch", k_torch},           {"tensorflow", k_tensorflow}, {"jax", k_jax},
    {"onnxruntime", k_onnxruntime}, {"tensorrt", k_tensorrt},     {"cupy", k_cupy},
};

} // namespace

std::optional<std::string> python_script(std::string_view name) {
  if (name == "query") {
    return std::string(k_query);
  }
  std::string_view body;
  for (const ImportScript& entry : k_import_scripts) {
    if (name == "import-" + std::string(entry.framework)) {
      body = entry.body;
    }
  }
  if (body.empty()) {
    return std::nullopt;
  }
  std::string script(k_import_head);
  script += body;
  script += k_import_tail;
  return script;
}

bool python_env_allowed(std::string_view entry) {
  const std::string_view name = entry.substr(0, entry.find('='));
  // What the interpreter and the frameworks need to find themselves, the GPUs and the language;
  // nothing that makes it load code from elsewhere (PYTHON*, LD_PRELOAD, PYTHONUSERBASE).
  static constexpr std::string_view k_names[] = {
      "PATH",        "HOME",         "USER",
      "LOGNAME",     "LANG",         "LANGUAGE",
      "TZ",          "TMPDIR",       "LD_LIBRARY_PATH",
      "VIRTUAL_ENV", "CONDA_PREFIX", "GPUCHECK_RESULT_FD"};
  static constexpr std::string_view k_prefixes[] = {"LC_",    "CUDA_", "NVIDIA_", "NCCL_",
                                                    "CUDNN_", "TF_",   "XLA_",    "JAX_"};
  for (const std::string_view allowed : k_names) {
    if (name == allowed) {
      return true;
    }
  }
  for (const std::string_view prefix : k_prefixes) {
    if (name.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

nlohmann::json child_python(const std::vector<std::string>& args) {
  if (args.size() != 2) {
    std::fputs("gpucheck: python child needs an interpreter and a script name\n", stderr);
    ::_exit(127);
  }
  const std::optional<std::string> script = python_script(args[1]);
  if (!script) {
    std::fprintf(stderr, "gpucheck: unknown python script '%s'\n", args[1].c_str());
    ::_exit(127);
  }
  // Isolated (docs/security.md, "The Python child"): -E ignores every PYTHON* variable
  // (PYTHONPATH's sitecustomize), -s the user's site-packages (usercustomize), -B writes no
  // bytecode; from "/", the working directory's modules (a json.py in /tmp) are not imported. The
  // same as -I, which Python 2 and 3.3 lack. The environment is cut to an allow-list.
  if (::chdir("/") != 0) {
    std::fprintf(stderr, "gpucheck: cannot change to /: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  std::string interpreter = args[0];
  std::string ignore_env = "-E";
  std::string no_user_site = "-s";
  std::string no_bytecode = "-B";
  std::string dash_c = "-c";
  std::string text = *script;
  char* argv[] = {interpreter.data(),
                  ignore_env.data(),
                  no_user_site.data(),
                  no_bytecode.data(),
                  dash_c.data(),
                  text.data(),
                  nullptr};
  std::vector<char*> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (python_env_allowed(*entry)) {
      env.push_back(*entry);
    }
  }
  env.push_back(nullptr);
  ::execve(interpreter.c_str(), argv, env.data());
  std::fprintf(stderr, "gpucheck: cannot run %s: %s\n", interpreter.c_str(), std::strerror(errno));
  std::fflush(stderr);
  ::_exit(127);
}

} // namespace gpucheck::platform
