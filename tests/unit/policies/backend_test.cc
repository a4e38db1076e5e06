// What each backend honours of a policy (policies/backend.h), and the `backend:` key.
#include "policies/backend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "policies/expand.h"
#include "policies/fingerprint.h"
#include "policies/loader.h"
#include "policies/parser.h"

namespace gander::policies {
namespace {

Policy Parse(const std::string& yaml) {
  auto policy = ParsePolicy(yaml, "p.yaml");
  EXPECT_TRUE(policy) << (policy ? "" : policy.error().message);
  return policy ? *policy : Policy{};
}

// Two policies extending base.yaml (`version: 1` and `base`) in a fresh directory DIR under the
// test temporary directory, each resolved: one as it is, one setting `key_line` too.
void ResolveDerived(const std::string& dir_name, const std::string& base,
                    const std::string& key_line, Policy* inherited, Policy* overridden) {
  std::string dir = ::testing::TempDir() + "/" + dir_name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/base.yaml") << "version: 1\n" << base;
  auto inherit = ParsePolicy("version: 1\nextends: base.yaml\n", dir + "/a.yaml");
  auto override = ParsePolicy("version: 1\nextends: base.yaml\n" + key_line, dir + "/b.yaml");
  ASSERT_TRUE(inherit && override);
  auto a = ResolveExtends(*inherit, {});
  auto b = ResolveExtends(*override, {});
  ASSERT_TRUE(a && b);
  *inherited = *a;
  *overridden = *b;
}

TEST(BackendKeyTest, ParsesNativeAndGvisor) {
  EXPECT_FALSE(Parse("version: 1\n").backend);
  EXPECT_EQ(Parse("version: 1\nbackend: native\n").backend, Backend::kNative);
  Policy gvisor = Parse("version: 1\nbackend: gvisor\n");
  EXPECT_EQ(gvisor.backend, Backend::kGvisor);
  EXPECT_EQ(FormatMark(gvisor.backend_mark), "p.yaml:2:10");
}

TEST(BackendKeyTest, RejectsAnUnknownBackendWithItsPosition) {
  auto policy = ParsePolicy("version: 1\nbackend: firecracker\n", "p.yaml");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().message,
            "p.yaml:2:10: backend: 'firecracker': unknown backend (expected one of: native, "
            "gvisor)");
}

TEST(BackendKeyTest, RoundTripsThroughYamlAndExpands) {
  Policy gvisor = Parse("version: 1\nbackend: gvisor\n");
  EXPECT_NE(ToYaml(gvisor).find("backend: gvisor"), std::string::npos);
  EXPECT_EQ(Parse(ToYaml(gvisor)).backend, Backend::kGvisor);
  auto expanded = Expand(gvisor, {"/ws", "/home/u", {}});
  ASSERT_TRUE(expanded);
  EXPECT_EQ(expanded->backend, Backend::kGvisor);
  auto native = Expand(Parse("version: 1\n"), {"/ws", "/home/u", {}});
  ASSERT_TRUE(native);
  EXPECT_EQ(native->backend, Backend::kNative);
  // Only a non-default backend enters the fingerprint: native policies keep theirs.
  EXPECT_EQ(CanonicalText(*native), "monitor.files 1\n");
  EXPECT_EQ(CanonicalText(*expanded), "monitor.files 1\nbackend gvisor\n");
}

TEST(BackendKeyTest, TheDerivedPolicyWins) {
  Policy a, b;
  ASSERT_NO_FATAL_FAILURE(
      ResolveDerived("backend_test", "backend: gvisor\n", "backend: native\n", &a, &b));
  EXPECT_EQ(a.backend, Backend::kGvisor);
  EXPECT_TRUE(FormatMark(a.backend_mark).ends_with("backend_test/base.yaml:2:10"));
  EXPECT_EQ(b.backend, Backend::kNative);
}

TEST(InstallKeyTest, TheDerivedPolicyWins) {
  Policy a, b;
  ASSERT_NO_FATAL_FAILURE(
      ResolveDerived("install_key_test", "install: off\n", "install: auto\n", &a, &b));
  EXPECT_EQ(a.install, false);
  EXPECT_EQ(b.install, true);
}

// CheckBackendSupport of the policy `yaml` under `backend`.
Status SupportUnder(Backend backend, const std::string& yaml) {
  return CheckBackendSupport(Parse(yaml), backend);
}

TEST(CheckBackendSupportTest, NativeHonoursEverything) {
  EXPECT_TRUE(SupportUnder(Backend::kNative,
                           "version: 1\nnetwork: {allow: [{host: example.com, ports: [443]}]}\n"
                           "secrets: {T: {from: env, as: file}}\n"));
}

TEST(CheckBackendSupportTest, GvisorHonoursTheDefaultShape) {
  EXPECT_TRUE(SupportUnder(
      Backend::kGvisor,
      "version: 1\nbackend: gvisor\nfilesystem: {read: [/etc], write: ['${WORKSPACE}'], "
      "private: [/tmp], deny: [~/.ssh]}\nenv: {pass: [LANG]}\n"
      "limits: {processes: 64, open_files: 256, memory: 1GiB}\n"
      "network: {deny: [{host: 10.0.0.0/8}]}\n"
      "secrets: {T: {from: env, ttl: 1h}, F: {from: env, as: file}}\n"));
}

TEST(CheckBackendSupportTest, GvisorHonoursNetworkAllowThroughTheBroker) {
  EXPECT_TRUE(SupportUnder(Backend::kGvisor,
                           "version: 1\nbackend: gvisor\n"
                           "network:\n  allow:\n    - {host: api.github.com, ports: [443]}\n"));
}

TEST(CheckBackendSupportTest, GvisorHonoursSecretsAsFiles) {
  // Mounted read-only at /run/secrets in the bundle (launcher/run.cc), as native.
  EXPECT_TRUE(
      SupportUnder(Backend::kGvisor,
                   "version: 1\nbackend: gvisor\n"
                   "secrets:\n  TOKEN: {from: env, as: file}\n  KEY: {from: env, as: file}\n"));
}

TEST(CheckBackendSupportTest, GvisorRefusesNoNamespaces) {
  // runsc always makes its own namespaces: `--no-namespaces` cannot be honoured under gVisor,
  // whether the backend comes from the policy or from --backend.
  Policy p = Parse("version: 1\nbackend: gvisor\n");
  Status refused = CheckBackendSupport(p, Backend::kGvisor, {.no_namespaces = true});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "--backend gvisor: --no-namespaces is for the native backend only");
  EXPECT_TRUE(CheckBackendSupport(p, Backend::kNative, {.no_namespaces = true}));
  EXPECT_TRUE(CheckBackendSupport(p, Backend::kGvisor, {.no_namespaces = false}));
}

}  // namespace
}  // namespace gander::policies
