// The "python" child mode with fake interpreters (shell scripts): a result on fd 3, a crash, a
// hang and a missing interpreter each end as the child machinery says, never as our crash.
#include "platform/python_child.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(PythonChild, ScriptsExistForQueryAndEachFramework) {
  for (const char* name : {"query", "import-pytorch", "import-tensorflow", "import-jax"}) {
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
  // The fake checks that it is given "-c SCRIPT", then answers like the query script.
  tree.file("/python3",
            "#!/bin/sh\n[ \"$1\" = \"-c\" ] || exit 3\ncase \"$2\" in *sys.prefix*) ;; *) exit 4;; "
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

} // namespace
} // namespace gpucheck::platform
