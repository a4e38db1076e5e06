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

TEST(PackageRunner, Uvx) {
  PackageRun run = Parse({"uvx", "mcp-server-fetch", "--ignore-robots-txt"});
  EXPECT_EQ(run.runner, Runner::kUvx);
  EXPECT_EQ(run.python.name, "mcp-server-fetch");
  EXPECT_EQ(run.python.text, "mcp-server-fetch");
  EXPECT_EQ(run.name(), "mcp-server-fetch");
  EXPECT_TRUE(run.bin.empty());
  EXPECT_EQ(run.args, (std::vector<std::string>{"--ignore-robots-txt"}));
  // uvx's NAME@VERSION is pip's NAME==VERSION; @latest is any version.
  PackageRun at = Parse({"/usr/bin/uvx", "-q", "mcp-server-git@2025.1.14", "--repository", "."});
  EXPECT_EQ(at.python.text, "mcp-server-git==2025.1.14");
  EXPECT_EQ(at.python.version, "2025.1.14");
  EXPECT_EQ(at.spec(), "mcp-server-git==2025.1.14");
  EXPECT_EQ(Parse({"uvx", "tool@latest"}).python.text, "tool");
  PackageRun from = Parse({"uvx", "--from", "pkg[cli]>=1,<2", "pkg-serve", "--port", "0"});
  EXPECT_EQ(from.python.name, "pkg");
  EXPECT_EQ(from.python.text, "pkg[cli]>=1,<2");
  EXPECT_EQ(from.python.version, "");
  EXPECT_EQ(from.bin, "pkg-serve");
  EXPECT_EQ(from.args, (std::vector<std::string>{"--port", "0"}));
  EXPECT_EQ(Parse({"uvx", "--from=a==1.0", "b"}).python.version, "1.0");
}

TEST(PackageRunner, PipxRun) {
  PackageRun run = Parse({"pipx", "run", "mcp-server-time", "--local-timezone", "UTC"});
  EXPECT_EQ(run.runner, Runner::kPipxRun);
  EXPECT_EQ(run.python.name, "mcp-server-time");
  EXPECT_EQ(run.args, (std::vector<std::string>{"--local-timezone", "UTC"}));
  PackageRun spec = Parse({"pipx", "run", "--no-cache", "--spec", "x-tools==0.3", "x"});
  EXPECT_EQ(spec.python.text, "x-tools==0.3");
  EXPECT_EQ(spec.python.version, "0.3");
  EXPECT_EQ(spec.bin, "x");
  EXPECT_EQ(Parse({"pipx", "run", "--", "y"}).python.name, "y");
}

TEST(PackageRunner, PythonRunnerErrorsNameTheProblem) {
  auto option = ParsePackageRunner({"uvx", "--with", "extra", "tool"});
  ASSERT_FALSE(option);
  EXPECT_NE(option.error().message.find("uvx option --with"), std::string::npos);
  auto pipx = ParsePackageRunner({"pipx", "run", "--python", "3.12", "tool"});
  ASSERT_FALSE(pipx);
  EXPECT_NE(pipx.error().message.find("pipx run option --python"), std::string::npos);
  EXPECT_FALSE(ParsePackageRunner({"uvx"}));
  EXPECT_FALSE(ParsePackageRunner({"uvx", "--from"}));
  EXPECT_FALSE(ParsePackageRunner({"pipx", "run"}));
  // URLs, files and pipx's `@` are not index requirements.
  EXPECT_FALSE(ParsePackageRunner({"uvx", "--from", "git+https://x/y.git", "y"}));
  EXPECT_FALSE(ParsePackageRunner({"uvx", "./dist/x-1.0-py3-none-any.whl"}));
  EXPECT_FALSE(ParsePackageRunner({"pipx", "run", "tool@1.0"}));
}

TEST(PySpecTest, NamesVersionsNormalization) {
  auto exact = ParsePySpec("Foo.Bar_baz[x,y] == 1.2.3rc1", false);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->name, "Foo.Bar_baz");
  EXPECT_EQ(exact->version, "1.2.3rc1");
  EXPECT_EQ(NormalizePyName(exact->name), "foo-bar-baz");
  EXPECT_EQ(NormalizePyName("a__b--c"), "a-b-c");
  for (const char* loose : {"p>=1.0", "p~=1.2", "p==1.*", "p!=2,>=1", "p"}) {
    auto spec = ParsePySpec(loose, false);
    ASSERT_TRUE(spec) << loose;
    EXPECT_EQ(spec->version, "") << loose;
  }
  EXPECT_FALSE(ParsePySpec("-e", false));
  EXPECT_FALSE(ParsePySpec("p; rm -rf /", false));
}

TEST(PythonIndex, UvEnvironmentThenUvTomlThenPyPi) {
  EXPECT_EQ(UvIndex(std::nullopt, std::nullopt, ""), "https://pypi.org/simple");
  EXPECT_EQ(UvIndex(std::string("http://a/simple"), std::string("http://b/simple"), ""),
            "http://a/simple");
  EXPECT_EQ(UvIndex(std::nullopt, std::string("http://b/simple"), "index-url = \"http://c/\""),
            "http://b/simple");
  EXPECT_EQ(UvIndex(std::nullopt, std::nullopt, "# uv\nindex-url = \"http://c/simple\"\n"),
            "http://c/simple");
  EXPECT_EQ(UvIndex(std::nullopt, std::nullopt,
                    "[[index]]\nname = \"extra\"\nurl = \"http://x/\"\n"
                    "[[index]]\nurl = \"http://d:8080/simple\"\ndefault = true\n"
                    "[pip]\nindex-url = \"http://no/\"\n"),
            "http://d:8080/simple");
}

TEST(PythonIndex, PipEnvironmentThenPipConfThenPyPi) {
  EXPECT_EQ(PipIndex(std::nullopt, ""), "https://pypi.org/simple");
  EXPECT_EQ(PipIndex(std::nullopt,
                     "[global]\ntimeout = 60\nindex-url = https://mirror.example/simple\n"
                     "[freeze]\nindex-url = http://no/\n"),
            "https://mirror.example/simple");
  // Later files (pip's user file after /etc/pip.conf) win.
  EXPECT_EQ(
      PipIndex(std::nullopt, "[global]\nindex-url = http://a/\n\n[install]\nindex_url=http://b/\n"),
      "http://b/");
  EXPECT_EQ(PipIndex(std::string("http://127.0.0.1:3141/simple"), "[global]\nindex-url=http://a/"),
            "http://127.0.0.1:3141/simple");
}

TEST(ConsoleScript, NamedAfterThePackageOnlyOneOrWanted) {
  const std::string two =
      "[console_scripts]\nmcp-server-fetch = mcp_server_fetch:main\nother = x:y\n"
      "[gui_scripts]\ngui = g:main\n";
  auto named = PickConsoleScript(two, "mcp_server.fetch", "");
  ASSERT_TRUE(named);
  EXPECT_EQ(*named, "mcp-server-fetch");
  auto wanted = PickConsoleScript(two, "mcp-server-fetch", "other");
  ASSERT_TRUE(wanted);
  EXPECT_EQ(*wanted, "other");
  auto only = PickConsoleScript("[console_scripts]\nserve = p:main\n", "p-tools", "");
  ASSERT_TRUE(only);
  EXPECT_EQ(*only, "serve");
  auto missing = PickConsoleScript(two, "pkg", "gui");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("(it has mcp-server-fetch, other)"), std::string::npos);
  EXPECT_FALSE(PickConsoleScript(two, "pkg", ""));
  EXPECT_FALSE(PickConsoleScript("", "pkg", ""));
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
  EXPECT_EQ(OsvQueryBody("mcp-server-fetch", "1.0", "PyPI"),
            R"({"package":{"ecosystem":"PyPI","name":"mcp-server-fetch"},"version":"1.0"})");
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
