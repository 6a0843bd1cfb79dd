// Python environments read from their files alone (read_python_layout): real venv, conda, Debian
// and upstream layouts built in fixture trees, symlinked interpreters, the user site-packages and
// the switches that remove it. No interpreter runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpucheck/model/json_io.hpp"
#include "probes/python_envs.hpp"
#include "support/fixture_tree.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;
using Vars = std::map<std::string, std::string>;
using Dirs = std::vector<std::string>;

const std::string k_user_site_312 = "/home/u/.local/lib/python3.12/site-packages";
const std::string k_venv = "/opt/app/.venv";
const std::string k_venv_site = "/opt/app/.venv/lib/python3.12/site-packages";

PythonLayout layout_of(const FixtureTree& tree, const std::string& interpreter,
                       const Vars& vars = {{"HOME", "/home/u"}}) {
  return read_python_layout(Sysroot(tree.root()), Environment(vars), {interpreter, {"PATH"}});
}

/// Debian's python3.12 at /usr: the interpreter behind a python3 symlink, its standard library,
/// the Debian site directories, a site-packages Debian does not use, the headers.
void make_debian_python(FixtureTree& tree, const std::string& minor = "3.12",
                        const std::string& release = "3.12.3") {
  tree.file("/usr/bin/python" + minor, "ELF", 0755)
      .symlink("/usr/bin/python3", "python" + minor)
      .file("/usr/lib/python" + minor + "/os.py", "# stdlib")
      .dir("/usr/lib/python3/dist-packages")
      .dir("/usr/local/lib/python" + minor + "/dist-packages")
      .dir("/usr/lib/python" + minor + "/site-packages")
      .file("/usr/include/python" + minor + "/patchlevel.h",
            "#define PY_MINOR_VERSION 12\n#define PY_VERSION              \"" + release +
                "\"\n#define PY_VERSION_HEX 0\n");
}

/// A venv made by `python3 -m venv` from Debian's python3.12: bin/python3 an absolute symlink to
/// the base interpreter, bin/python a relative one to python3, lib64 -> lib.
void make_linked_venv(FixtureTree& tree, const std::string& system_site) {
  tree.file(k_venv + "/pyvenv.cfg",
            "home = /usr/bin\ninclude-system-site-packages = " + system_site +
                "\nversion = 3.12.3\nexecutable = /usr/bin/python3.12\n")
      .symlink(k_venv + "/bin/python3", "/usr/bin/python3.12")
      .symlink(k_venv + "/bin/python", "python3")
      .dir(k_venv_site)
      .symlink(k_venv + "/lib64", "lib");
}

TEST(PythonFiles, VenvWithALinkedInterpreterKeepsItsOwnPrefix) {
  FixtureTree tree;
  make_debian_python(tree);
  make_linked_venv(tree, "false");
  tree.dir(k_user_site_312);
  for (const char* interpreter : {"/opt/app/.venv/bin/python3", "/opt/app/.venv/bin/python"}) {
    const PythonLayout layout = layout_of(tree, interpreter);
    const PythonEnvironment& env = layout.environment;
    EXPECT_TRUE(layout.complete) << interpreter;
    EXPECT_EQ(env.interpreter, interpreter);
    EXPECT_EQ(env.source, "layout");
    EXPECT_EQ(env.kind, "venv");
    EXPECT_EQ(env.prefix, k_venv); // not /usr, where the symlink leads
    EXPECT_EQ(env.base_prefix, "/usr");
    EXPECT_EQ(env.version, "3.12.3");
    // Without system site-packages: neither the user site nor Debian's; lib64 is lib.
    EXPECT_EQ(env.site_packages, Dirs{k_venv_site}) << interpreter;
  }
}

TEST(PythonFiles, VenvWithSystemSitePackagesAddsTheUserSiteAndTheBase) {
  FixtureTree tree;
  make_debian_python(tree);
  make_linked_venv(tree, "True"); // site.py compares without case
  tree.dir(k_user_site_312);
  const PythonLayout layout = layout_of(tree, "/opt/app/.venv/bin/python3");
  EXPECT_TRUE(layout.complete);
  // site.py: the venv's own first, then the user site, then the base's (Debian's, which puts
  // lib/python3.12/site-packages first inside a venv).
  EXPECT_EQ(layout.environment.site_packages,
            (Dirs{k_venv_site, k_user_site_312, "/usr/lib/python3.12/site-packages",
                  "/usr/local/lib/python3.12/dist-packages", "/usr/lib/python3/dist-packages"}));
  const PythonLayout no_user = layout_of(tree, "/opt/app/.venv/bin/python3",
                                         {{"HOME", "/home/u"}, {"PYTHONNOUSERSITE", "1"}});
  EXPECT_EQ(no_user.environment.site_packages,
            (Dirs{k_venv_site, "/usr/lib/python3.12/site-packages",
                  "/usr/local/lib/python3.12/dist-packages", "/usr/lib/python3/dist-packages"}));
}

TEST(PythonFiles, VirtualenvVersionInfoAndAMissingVersionKey) {
  FixtureTree tree;
  make_debian_python(tree);
  tree.file(k_venv + "/pyvenv.cfg",
            "home = /usr/bin\nimplementation = CPython\nversion_info = 3.12.3.final.0\n")
      .symlink(k_venv + "/bin/python3", "/usr/bin/python3.12")
      .dir(k_venv_site);
  EXPECT_EQ(layout_of(tree, k_venv + "/bin/python3").environment.version, "3.12.3");
  // No version at all: the venv's lib/python3.12, completed by the base's headers.
  tree.file(k_venv + "/pyvenv.cfg", "home = /usr/bin\n");
  const PythonLayout layout = layout_of(tree, k_venv + "/bin/python3");
  EXPECT_TRUE(layout.complete);
  EXPECT_EQ(layout.environment.version, "3.12.3");
  // include-system-site-packages defaults to true, as in site.py.
  EXPECT_EQ(layout.environment.site_packages,
            (Dirs{k_venv_site, "/usr/lib/python3.12/site-packages",
                  "/usr/local/lib/python3.12/dist-packages", "/usr/lib/python3/dist-packages"}));
}

TEST(PythonFiles, CondaEnvironmentVersionFromCondaMeta) {
  FixtureTree tree;
  const std::string prefix = "/opt/conda/envs/ml";
  tree.file(prefix + "/bin/python3.11", "ELF", 0755)
      .symlink(prefix + "/bin/python", "python3.11")
      .file(prefix + "/conda-meta/history", "")
      .file(prefix + "/conda-meta/python-3.11.7-h955ad1f_0_cpython.json", "{}")
      .file(prefix + "/conda-meta/python-dateutil-2.9.0-pyhd8ed1ab_0.json", "{}")
      .file(prefix + "/conda-meta/python_abi-3.11-4_cp311.json", "{}")
      .file(prefix + "/lib/python3.11/os.py", "")
      .dir(prefix + "/lib/python3.11/site-packages")
      .dir("/home/u/.local/lib/python3.11/site-packages");
  const PythonLayout layout = layout_of(tree, prefix + "/bin/python");
  const PythonEnvironment& env = layout.environment;
  EXPECT_TRUE(layout.complete);
  EXPECT_EQ(env.kind, "conda");
  EXPECT_EQ(env.prefix, prefix);
  EXPECT_EQ(env.base_prefix, prefix);
  EXPECT_EQ(env.version, "3.11.7");
  // conda's Python keeps the user site (ahead of its own).
  EXPECT_EQ(env.site_packages, (Dirs{"/home/u/.local/lib/python3.11/site-packages",
                                     prefix + "/lib/python3.11/site-packages"}));
}

TEST(PythonFiles, DebianSystemPythonUsesDistPackagesInSiteOrder) {
  FixtureTree tree;
  make_debian_python(tree, "3.11", "3.11.2");
  tree.symlink("/bin", "usr/bin").dir("/home/u/.local/lib/python3.11/site-packages");
  // /bin/python3 (merged /usr) is /usr/bin/python3.11: the prefix is /usr, not /.
  for (const char* interpreter : {"/usr/bin/python3", "/bin/python3"}) {
    const PythonLayout layout = layout_of(tree, interpreter);
    const PythonEnvironment& env = layout.environment;
    EXPECT_TRUE(layout.complete) << interpreter;
    EXPECT_EQ(env.kind, "system");
    EXPECT_EQ(env.prefix, "/usr") << interpreter;
    EXPECT_EQ(env.base_prefix, "/usr");
    EXPECT_EQ(env.version, "3.11.2"); // patchlevel.h
    // Debian's site.py: no /usr/lib/python3.11/site-packages outside a venv.
    EXPECT_EQ(env.site_packages,
              (Dirs{"/home/u/.local/lib/python3.11/site-packages",
                    "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"}))
        << interpreter;
  }
  // Without the headers the version is the standard library's directory.
  tree.remove("/usr/include");
  EXPECT_EQ(layout_of(tree, "/usr/bin/python3").environment.version, "3.11");
}

TEST(PythonFiles, UserSiteFollowsPythonUserBaseAndPythonNoUserSite) {
  FixtureTree tree;
  make_debian_python(tree);
  tree.dir(k_user_site_312).dir("/srv/pyuser/lib/python3.12/site-packages");
  const Dirs system{"/usr/local/lib/python3.12/dist-packages", "/usr/lib/python3/dist-packages"};
  auto sites = [&](const Vars& vars) {
    return layout_of(tree, "/usr/bin/python3", vars).environment.site_packages;
  };
  Dirs with_user{k_user_site_312};
  with_user.insert(with_user.end(), system.begin(), system.end());
  EXPECT_EQ(sites({{"HOME", "/home/u"}}), with_user);
  EXPECT_EQ(sites({{"HOME", "/home/u"}, {"PYTHONNOUSERSITE", "1"}}), system);
  EXPECT_EQ(sites({{"HOME", "/home/u"}, {"PYTHONNOUSERSITE", ""}}), with_user); // empty: unset
  Dirs user_base{"/srv/pyuser/lib/python3.12/site-packages"};
  user_base.insert(user_base.end(), system.begin(), system.end());
  EXPECT_EQ(sites({{"HOME", "/home/u"}, {"PYTHONUSERBASE", "/srv/pyuser"}}), user_base);
  EXPECT_EQ(sites({{"HOME", "/nowhere"}}), system); // no such directory: not on sys.path
  EXPECT_EQ(sites({}), system);
}

TEST(PythonFiles, UpstreamBuildPicksItsVersionByNameAndUsesSitePackages) {
  FixtureTree tree;
  // A python.org build in /usr/local (the python:3.12 container image), with a leftover 3.11.
  tree.file("/usr/local/bin/python3.12", "ELF", 0755)
      .symlink("/usr/local/bin/python3", "python3.12")
      .file("/usr/local/lib/python3.12/os.py", "")
      .dir("/usr/local/lib/python3.12/site-packages")
      .file("/usr/local/lib/python3.11/os.py", "")
      .dir("/usr/local/lib/python3.11/site-packages");
  const PythonLayout layout = layout_of(tree, "/usr/local/bin/python3", {});
  EXPECT_TRUE(layout.complete);
  EXPECT_EQ(layout.environment.prefix, "/usr/local");
  EXPECT_EQ(layout.environment.kind, "system");
  EXPECT_EQ(layout.environment.version, "3.12");
  EXPECT_EQ(layout.environment.site_packages, Dirs{"/usr/local/lib/python3.12/site-packages"});
}

TEST(PythonFiles, PythonPathSiteDirectoriesComeFirst) {
  FixtureTree tree;
  make_debian_python(tree);
  tree.dir("/work/deps/site-packages").dir("/work/src");
  const PythonLayout layout =
      layout_of(tree, "/usr/bin/python3",
                {{"PYTHONPATH", "/work/src:relative/site-packages:/work/deps/site-packages/:/gone/"
                                "site-packages"}});
  EXPECT_EQ(layout.environment.site_packages,
            (Dirs{"/work/deps/site-packages", "/usr/local/lib/python3.12/dist-packages",
                  "/usr/lib/python3/dist-packages"}));
}

TEST(PythonFiles, UnreadableLayoutsAreIncomplete) {
  FixtureTree tree;
  // pyenv's shim is a shell script: no pyvenv.cfg, no standard library near it, no version.
  tree.file("/home/u/.pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3\n", 0755);
  const PythonLayout shim = layout_of(tree, "/home/u/.pyenv/shims/python3");
  EXPECT_FALSE(shim.complete);
  EXPECT_EQ(shim.environment.version, "");
  EXPECT_TRUE(shim.environment.site_packages.empty());
  // A named version but no standard library: what it reads is still unknown.
  tree.file("/opt/py/bin/python3.13", "ELF", 0755).dir("/opt/py/lib/python3.13/site-packages");
  const PythonLayout bare = layout_of(tree, "/opt/py/bin/python3.13");
  EXPECT_FALSE(bare.complete);
  EXPECT_EQ(bare.environment.version, "3.13");
  const PythonLayout missing = layout_of(tree, "/missing/bin/python3.12");
  EXPECT_FALSE(missing.complete);
  EXPECT_EQ(missing.environment.prefix, "/missing");
  EXPECT_EQ(missing.environment.version, ""); // so that --python's typo is reported
  EXPECT_TRUE(missing.environment.site_packages.empty());
}

TEST(PythonFiles, BasePrefixRoundTripsThroughJsonAndTheSchema) {
  FixtureTree tree;
  make_debian_python(tree);
  make_linked_venv(tree, "false");
  SystemSnapshot snapshot;
  snapshot.python_environments = {layout_of(tree, k_venv + "/bin/python3").environment};
  const nlohmann::json j = snapshot;
  EXPECT_EQ(j.at("python_environments").at(0).at("base_prefix"), "/usr");
  const Expected<SystemSnapshot> back = snapshot_from_text(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, snapshot);
  const std::vector<std::string> violations =
      testing::report_schema().validate(j, "#/$defs/SystemSnapshot");
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);
  // An older snapshot without the key still loads, with the field empty.
  nlohmann::json older = j;
  older["python_environments"][0].erase("base_prefix");
  const Expected<SystemSnapshot> old_snapshot = snapshot_from_text(older.dump());
  ASSERT_TRUE(old_snapshot) << old_snapshot.error().message;
  EXPECT_EQ(old_snapshot->python_environments.at(0).base_prefix, "");
}

} // namespace
} // namespace gpucheck::probes
