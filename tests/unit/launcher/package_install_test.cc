// The install phase's pure parts: package-runner commands, npm specs, the registry, the bin a
// package runs, OSV's query body and answers.
#include <gtest/gtest.h>

#include "launcher/install/osv.h"
#include "launcher/install/package_spec.h"

namespace gander::launcher::install {
namespace {

PackageRun Parse(const std::vector<std::string>& command) {
  auto parsed = ParsePackageRunner(command);
  EXPECT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed && *parsed);
  return parsed && *parsed ? **parsed : PackageRun{};
}

TEST(PackageRunner, NpxWithYes) {
  PackageRun run = Parse({"npx", "-y", "@modelcontextprotocol/server-memory"});
  EXPECT_EQ(run.runner, Runner::kNpx);
  EXPECT_EQ(run.package.name, "@modelcontextprotocol/server-memory");
  EXPECT_EQ(run.package.version, "");
  EXPECT_TRUE(run.bin.empty());
  EXPECT_TRUE(run.args.empty());
}

TEST(PackageRunner, ArgumentsAfterThePackageBelongToIt) {
  PackageRun run = Parse({"/usr/bin/npx", "--yes", "@x/server-fs@1.2.3", "-y", "/data"});
  EXPECT_EQ(run.package.name, "@x/server-fs");
  EXPECT_EQ(run.package.version, "1.2.3");
  EXPECT_EQ(run.args, (std::vector<std::string>{"-y", "/data"}));
}

TEST(PackageRunner, PackageOptionNamesTheBin) {
  PackageRun run = Parse({"npx", "-p", "pkg@2", "pkg-cli", "serve"});
  EXPECT_EQ(run.package.name, "pkg");
  EXPECT_EQ(run.bin, "pkg-cli");
  EXPECT_EQ(run.args, (std::vector<std::string>{"serve"}));
  EXPECT_EQ(Parse({"npx", "--package=pkg", "--", "tool"}).bin, "tool");
}

TEST(PackageRunner, NpmExec) {
  PackageRun run = Parse({"npm", "exec", "--yes", "--", "server-x@0.1.0", "a"});
  EXPECT_EQ(run.runner, Runner::kNpmExec);
  EXPECT_EQ(run.package.name, "server-x");
  EXPECT_EQ(run.args, (std::vector<std::string>{"a"}));
  EXPECT_EQ(Parse({"npm", "x", "server-y"}).package.name, "server-y");
}

TEST(PackageRunner, PythonRunnersAreRecognised) {
  EXPECT_EQ(Parse({"uvx", "mcp-server-fetch"}).runner, Runner::kUvx);
  EXPECT_EQ(Parse({"pipx", "run", "mcp-server-fetch"}).runner, Runner::kPipxRun);
}

TEST(PackageRunner, OtherCommandsAreNot) {
  for (const std::vector<std::string>& c :
       {std::vector<std::string>{"node", "server.js"}, {"npm", "start"}, {"pipx", "list"}, {}}) {
    auto parsed = ParsePackageRunner(c);
    ASSERT_TRUE(parsed);
    EXPECT_FALSE(*parsed);
  }
}

TEST(PackageRunner, UnknownOptionsAndMissingPackagesAreErrors) {
  EXPECT_FALSE(ParsePackageRunner({"npx", "-c", "echo hi"}));
  EXPECT_FALSE(ParsePackageRunner({"npx", "-y"}));
  EXPECT_FALSE(ParsePackageRunner({"npx", "-p"}));
}

TEST(NpmSpecTest, Forms) {
  EXPECT_EQ(ParseNpmSpec("left-pad").name, "left-pad");
  EXPECT_EQ(ParseNpmSpec("left-pad@^1").version, "^1");
  EXPECT_FALSE(ParseNpmSpec("left-pad@^1").exact());
  EXPECT_FALSE(ParseNpmSpec("left-pad@latest").exact());
  EXPECT_TRUE(ParseNpmSpec("@s/p@1.0.0-rc.1").exact());
  EXPECT_EQ(ParseNpmSpec("@s/p@1.0.0-rc.1").name, "@s/p");
  EXPECT_EQ(ParseNpmSpec("@s/p").version, "");
  for (const char* t : {"./evil-1.0.0.tgz", "/tmp/x.tgz", "file:../x", "../x.tar.gz"}) {
    EXPECT_TRUE(ParseNpmSpec(t).tarball) << t;
    EXPECT_FALSE(ParseNpmSpec(t).exact()) << t;
  }
}

TEST(Registry, EnvironmentThenNpmrcThenDefault) {
  EXPECT_EQ(NpmRegistry(std::nullopt, ""), "https://registry.npmjs.org/");
  EXPECT_EQ(NpmRegistry(std::nullopt,
                        "; comment\nregistry = https://npm.example.com:8443/x/\n"
                        "@s:registry=https://other/\n"),
            "https://npm.example.com:8443/x/");
  EXPECT_EQ(NpmRegistry(std::string("http://127.0.0.1:4873/"), "registry=https://a/"),
            "http://127.0.0.1:4873/");
}

TEST(Registry, HostAndPort) {
  auto a = UrlHostPort("https://registry.npmjs.org/");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "registry.npmjs.org");
  EXPECT_EQ(a->port, 443);
  auto b = UrlHostPort("http://npm.example.com:4873");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->port, 4873);
  EXPECT_FALSE(UrlHostPort("ftp://x/"));
  EXPECT_FALSE(UrlHostPort("https://user:pw@x/"));
  EXPECT_FALSE(UrlHostPort("https://x:99999/"));
}

TEST(Bin, StringObjectAndChoice) {
  auto one = PickBin(R"({"name":"@s/tool","bin":"dist/index.js"})", "");
  ASSERT_TRUE(one);
  EXPECT_EQ(*one, "tool");
  auto only = PickBin(R"({"name":"@s/server-memory","bin":{"mcp-server-memory":"x.js"}})", "");
  ASSERT_TRUE(only);
  EXPECT_EQ(*only, "mcp-server-memory");
  auto named = PickBin(R"({"name":"p","bin":{"a":"a.js","p":"p.js"}})", "");
  ASSERT_TRUE(named);
  EXPECT_EQ(*named, "p");
  auto wanted = PickBin(R"({"name":"p","bin":{"a":"a.js","p":"p.js"}})", "a");
  ASSERT_TRUE(wanted);
  EXPECT_EQ(*wanted, "a");
  EXPECT_FALSE(PickBin(R"({"name":"p","bin":{"a":"a.js","b":"b.js"}})", ""));
  EXPECT_FALSE(PickBin(R"({"name":"p"})", ""));
  EXPECT_FALSE(PickBin("not json", ""));
}

TEST(Osv, QueryBody) {
  EXPECT_EQ(OsvQueryBody("@s/p", "1.0.0"),
            R"({"package":{"ecosystem":"npm","name":"@s/p"},"version":"1.0.0"})");
  EXPECT_EQ(OsvQueryBody("p", ""), R"({"package":{"ecosystem":"npm","name":"p"}})");
}

TEST(Osv, OnlyMalAdvisoriesCount) {
  auto none = MaliciousIds("{}");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  auto mixed = MaliciousIds(
      R"({"vulns":[{"id":"GHSA-xxxx"},{"id":"MAL-2025-1234","summary":"x"},{"id":7}]})");
  ASSERT_TRUE(mixed);
  EXPECT_EQ(*mixed, (std::vector<std::string>{"MAL-2025-1234"}));
  EXPECT_FALSE(MaliciousIds("<html>"));
  EXPECT_FALSE(MaliciousIds(R"({"vulns":{}})"));
}

}  // namespace
}  // namespace gander::launcher::install
