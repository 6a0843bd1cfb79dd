// The "python" child mode with fake interpreters (shell scripts): a result on fd 3, a crash, a
// hang and a missing interpreter each end as the child machinery says, never as our crash.
#include "platform/python_child.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "probes/python_envs.hpp"
#include "process/child_process.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::platform {
namespace {

using process::ChildOutcome;
using process::ChildRequest;
using process::run_child;

using namespace std::chrono_literals;
using gpucheck::testing::FixtureTree;

ChildOutcome run_python(const std::string& interpreter, const std::string& script,
                        std::chrono::milliseconds timeout = 5000ms) {
  ChildRequest request;
  request.mode = "python";
  request.args = {interpreter, script};
  request.timeout = timeout;
  return run_child(request);
}

// Every framework the probes find (find_frameworks over an environment holding each one's
// distribution) has its import script: --import asked for `import-onnxruntime` and
// `import-cupy`, which did not exist, and failed on healthy machines (issue 35). A framework the
// probes learn to find must bring its script, or this fails.
TEST(PythonChild, ScriptsExistForQueryAndEachFramework) {
  PythonEnvironment env;
  env.site_packages = {"/nonexistent/site-packages"};
  for (const char* dist : {"torch", "tensorflow", "jax", "jaxlib", "onnxruntime-gpu",
                           "tensorrt-cu12", "cupy-cuda13x"}) {
    env.distributions.push_back(
        {.name = dist, .version = "1.0", .metadata_dir = "", .libraries = {}});
  }
  const std::vector<FrameworkInstall> found =
      probes::find_frameworks(probes::Sysroot("/nonexistent"), env, std::nullopt, {});
  std::vector<std::string> names{"query"};
  for (const FrameworkInstall& fw : found) {
    names.push_back("import-" + fw.name);
  }
  EXPECT_EQ(names.size(), 7u) << "the fixture no longer holds every framework";
  for (const std::string& name : names) {
    const std::optional<std::string> script = python_script(name);
    ASSERT_TRUE(script) << name;
    EXPECT_NE(script->find("GPUCHECK_RESULT_FD"), std::string::npos) << name;
  }
  EXPECT_NE(python_script("import-pytorch")->find("torch.cuda.get_arch_list()"), std::string::npos);
  EXPECT_NE(python_script("import-pytorch")->find("/proc/self/maps"), std::string::npos);
  EXPECT_EQ(python_script("import-mxnet"), std::nullopt);
}

TEST(PythonChild, FakeInterpreterAnswersOnTheResultFd) {
  FixtureTree tree;
  // The fake checks that it is given "-E -s -B -c SCRIPT" (isolated: no PYTHON* variables, no
  // user site, no bytecode), then answers like the query script.
  tree.file("/python3",
            "#!/bin/sh\n[ \"$1 $2 $3 $4\" = \"-E -s -B -c\" ] || exit 3\ncase \"$5\" in "
            "*sys.prefix*) ;; *) exit 4;; "
            "esac\necho '{\"version\": \"3.12.3\", \"prefix\": \"/opt/venv\", \"site_packages\": "
            "[\"/opt/venv/lib/python3.12/site-packages\"]}' >&3\n",
            0755);
  const ChildOutcome outcome = run_python(tree.host("/python3"), "query");
  ASSERT_TRUE(outcome.ok()) << (outcome.failure ? outcome.failure->detail : "");
  const auto answer = probes::parse_interpreter_answer(*outcome.payload);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->prefix, "/opt/venv");
  EXPECT_EQ(answer->version, "3.12.3");
}

TEST(PythonChild, CrashingImportIsAFailureWithItsOutput) {
  FixtureTree tree;
  tree.file("/python3",
            "#!/bin/sh\necho 'Fatal Python error: Segmentation fault' >&2\nkill -SEGV $$\n", 0755);
  const ChildOutcome outcome = run_python(tree.host("/python3"), "import-pytorch");
  ASSERT_FALSE(outcome.ok());
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::signal);
  EXPECT_EQ(outcome.failure->signal_name, "SIGSEGV");
  const FrameworkImport result = probes::parse_import_result("pytorch", nullptr, outcome.failure);
  ASSERT_TRUE(result.failure);
  EXPECT_NE(result.failure->stderr_tail.find("Fatal Python error"), std::string::npos);
}

TEST(PythonChild, HangingImportIsKilledAtItsDeadline) {
  FixtureTree tree;
  tree.file("/python3", "#!/bin/sh\nsleep 30\n", 0755);
  const auto start = std::chrono::steady_clock::now();
  const ChildOutcome outcome = run_python(tree.host("/python3"), "import-jax", 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::timeout);
}

TEST(PythonChild, MissingInterpreterExits127) {
  FixtureTree tree;
  const ChildOutcome outcome = run_python(tree.host("/no-python"), "query");
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::exit);
  EXPECT_EQ(outcome.failure->exit_code, 127);
  EXPECT_NE(outcome.failure->stderr_tail.find("cannot run"), std::string::npos);
}

TEST(PythonChild, ImportResultOfAFakeTorch) {
  FixtureTree tree;
  tree.file("/python3",
            "#!/bin/sh\necho '{\"version\": \"2.11.0+cu130\", \"gpu_available\": true, "
            "\"device_count\": 1, \"arch_list\": [\"sm_90\"], \"op_ok\": true, \"seconds\": 0.5}' "
            ">&3\n",
            0755);
  const ChildOutcome outcome = run_python(tree.host("/python3"), "import-pytorch");
  ASSERT_TRUE(outcome.ok());
  const FrameworkImport result =
      probes::parse_import_result("pytorch", outcome.payload.get(), outcome.failure);
  EXPECT_EQ(result.gpu_available, true);
  EXPECT_EQ(result.arch_list, std::vector<std::string>{"sm_90"});
  EXPECT_EQ(result.failure, std::nullopt);
}

// Another user's code never runs in the interpreter: not a json.py in the working directory
// (/tmp), not PYTHONPATH's sitecustomize.py, not the user site's usercustomize.py (HOME,
// PYTHONUSERBASE). Each would leave a marker. The real python3 answers the query all the same.
TEST(PythonChild, TheInterpreterRunsIsolatedFromTheCallersFoldersAndVariables) {
  if (::access("/usr/bin/python3", X_OK) != 0) {
    GTEST_SKIP() << "no /usr/bin/python3 here";
  }
  FixtureTree tree;
  const std::string marker = tree.host("/ran");
  const std::string plant = "open('" + marker + "', 'a').write('{}\\n')\n";
  tree.file("/cwd/json.py", fmt::format(fmt::runtime(plant), "cwd json.py"));
  tree.file("/pp/sitecustomize.py", fmt::format(fmt::runtime(plant), "PYTHONPATH sitecustomize"));
  for (const char* version : {"3.9", "3.10", "3.11", "3.12", "3.13", "3.14"}) {
    tree.file(fmt::format("/userbase/lib/python{}/site-packages/usercustomize.py", version),
              fmt::format(fmt::runtime(plant), "usercustomize"));
  }
  ChildRequest request;
  request.mode = "python";
  request.args = {"/usr/bin/python3", "query"};
  request.timeout = 20000ms;
  request.env = {{"PYTHONPATH", tree.host("/pp")},
                 {"PYTHONUSERBASE", tree.host("/userbase")},
                 {"PYTHONSTARTUP", tree.host("/pp/sitecustomize.py")}};
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(tree.host("/cwd"));
  const ChildOutcome outcome = run_child(request);
  std::filesystem::current_path(before);
  ASSERT_TRUE(outcome.ok()) << (outcome.failure ? outcome.failure->detail : "")
                            << outcome.stderr_tail;
  EXPECT_TRUE(probes::parse_interpreter_answer(*outcome.payload));
  std::ifstream ran(marker);
  std::string what((std::istreambuf_iterator<char>(ran)), std::istreambuf_iterator<char>());
  EXPECT_EQ(what, "") << "the interpreter ran planted code: " << what;
}

TEST(PythonChild, OnlyAllowedVariablesReachTheInterpreter) {
  for (const char* kept : {"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "CUDA_VISIBLE_DEVICES=0",
                           "NVIDIA_VISIBLE_DEVICES=all", "VIRTUAL_ENV=/opt/v", "XLA_FLAGS=",
                           "LD_LIBRARY_PATH=/usr/local/cuda/lib64", "GPUCHECK_RESULT_FD=3"}) {
    EXPECT_TRUE(python_env_allowed(kept)) << kept;
  }
  for (const char* dropped :
       {"PYTHONPATH=/home/m", "PYTHONHOME=/x", "PYTHONUSERBASE=/x", "PYTHONSTARTUP=/x",
        "LD_PRELOAD=/home/m/evil.so", "BASH_ENV=/home/m/rc", "ENV=/home/m/rc", "PATHX=1", "IFS=x",
        "PERL5LIB=/x"}) {
    EXPECT_FALSE(python_env_allowed(dropped)) << dropped;
  }
}

} // namespace
} // namespace gpucheck::platform
