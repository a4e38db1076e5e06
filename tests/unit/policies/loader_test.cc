// Policy files, profiles and `extends` chains (policies/loader.h).
#include "policies/loader.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

namespace gander::policies {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDataDir = GANDER_TEST_DATA_DIR;
const std::string kExtendsDir = kDataDir + "/extends";

std::vector<std::string> Paths(const std::vector<PathEntry>& entries) {
  std::vector<std::string> out;
  for (const PathEntry& entry : entries) out.push_back(entry.path);
  return out;
}

// A fresh directory under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::path(::testing::TempDir()) / "gander-policies-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
    EXPECT_FALSE(path_.empty()) << std::strerror(errno);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

TEST(LoadPolicyFileTest, MissingFileNamesPathAndErrno) {
  Result<Policy> policy = LoadPolicyFile(kDataDir + "/no-such.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().code, ENOENT);
  EXPECT_EQ(policy.error().Describe(), "cannot load policy: cannot open " + kDataDir +
                                           "/no-such.yaml: " + std::strerror(ENOENT));
}

TEST(LoadPolicyFileTest, DirectoryIsAnError) {
  Result<Policy> policy = LoadPolicyFile(kDataDir);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().code, EISDIR);
  EXPECT_THAT(policy.error().Describe(), HasSubstr(kDataDir));
}

// Runs `load` against the FIFO `fifo`. Were the loader to block in open() (no writer), a
// watchdog opens the FIFO for writing after 5 s so that the test ends; the test then fails on
// `had_to_unblock`. A loader that never waits on the FIFO returns before the watchdog looks.
template <typename T>
T LoadWithoutWriter(const std::string& fifo, const std::function<T()>& load, bool* had_to_unblock) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  *had_to_unblock = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, std::chrono::seconds(5), [&] { return done; })) return;
    *had_to_unblock = true;
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
  });
  T result = load();
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  return result;
}

TEST(LoadPolicyFileTest, FifoIsRefusedWithoutWaitingForAWriter) {
  TempDir dir;
  std::string fifo = dir.path() + "/pipe.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  bool unblocked = false;
  Result<Policy> policy = LoadWithoutWriter<Result<Policy>>(
      fifo, [&] { return LoadPolicyFile(fifo); }, &unblocked);
  EXPECT_FALSE(unblocked) << "the loader waited in open() for a writer on the FIFO";
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().Describe(), HasSubstr(fifo + " is not a regular file"));
}

TEST(ResolveExtendsTest, ExtendsNamingAFifoIsRefusedWithoutWaiting) {
  TempDir dir;
  std::string fifo = dir.path() + "/pipe.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  Result<Policy> leaf = LoadPolicyFile(dir.Write("leaf.yaml", "version: 1\nextends: pipe.yaml\n"));
  ASSERT_TRUE(leaf.ok()) << leaf.error().Describe();
  bool unblocked = false;
  Result<Policy> merged = LoadWithoutWriter<Result<Policy>>(
      fifo, [&] { return ResolveExtends(*leaf, {}); }, &unblocked);
  EXPECT_FALSE(unblocked) << "the loader waited in open() for a writer on the FIFO";
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.error().Describe(), HasSubstr("is not a regular file"));
}

TEST(LoadPolicyFileTest, ParseErrorsNameTheFile) {
  Result<Policy> policy = LoadPolicyFile(kDataDir + "/profiles/broken.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().message, kDataDir +
                                        "/profiles/broken.yaml:3:14: limits.processes: expected "
                                        "a positive integer, got 'lots'");
}

TEST(LoadProfileTest, BuiltinDefaultExists) {
  EXPECT_THAT(BuiltinProfileNames(), Contains("default"));
  Result<Policy> policy = LoadProfile("default", {});
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->source, "profile:default");
  EXPECT_FALSE(policy->filesystem.deny.empty());
  EXPECT_EQ(policy->filesystem.deny[0].mark.file, "profile:default");
}

TEST(LoadProfileTest, SearchDirsComeFirstInOrder) {
  Result<Policy> policy = LoadProfile(
      "default", {kDataDir + "/nowhere", kDataDir + "/override", kDataDir + "/profiles"});
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->source, kDataDir + "/override/default.yaml");
  EXPECT_THAT(Paths(policy->filesystem.read), ElementsAre("/override"));

  policy = LoadProfile("custom", {kDataDir + "/override", kDataDir + "/profiles"});
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->source, kDataDir + "/profiles/custom.yaml");
}

TEST(LoadProfileTest, UnknownNameListsTheAvailableOnes) {
  Result<Policy> policy = LoadProfile("nodejs", {kDataDir + "/profiles", kDataDir + "/override"});
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().message, StartsWith("unknown profile 'nodejs' (available: "));
  EXPECT_THAT(policy.error().message,
              AllOf(HasSubstr("broken"), HasSubstr("custom"), HasSubstr("default")));
}

TEST(LoadProfileTest, RejectsNamesThatCouldBePaths) {
  for (const char* name : {"", "../default", "a/b", "default.yaml", "x y"}) {
    Result<Policy> policy = LoadProfile(name, {kDataDir + "/profiles"});
    ASSERT_FALSE(policy.ok()) << name;
    EXPECT_EQ(policy.error().message,
              "invalid profile name '" + std::string(name) + "' (expected [A-Za-z0-9_-]+)");
  }
}

TEST(LoadProfileTest, ParseErrorInASearchDirIsReported) {
  Result<Policy> policy = LoadProfile("broken", {kDataDir + "/profiles"});
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.error().message, StartsWith(kDataDir + "/profiles/broken.yaml:3:14: "));
}

TEST(ResolveExtendsTest, PolicyWithoutExtendsIsItsOwnChain) {
  Result<Policy> leaf = ParsePolicy("version: 1\nfilesystem: {read: [/a]}\n", "solo.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->source, "solo.yaml");
  EXPECT_THAT(merged->chain, ElementsAre("solo.yaml"));
  EXPECT_THAT(Paths(merged->filesystem.read), ElementsAre("/a"));
}

TEST(ResolveExtendsTest, MergesTheChainBaseFirst) {
  Result<Policy> leaf = LoadPolicyFile(kExtendsDir + "/child.yaml");
  ASSERT_TRUE(leaf.ok()) << leaf.error().Describe();
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_TRUE(merged.ok()) << merged.error().Describe();
  const Policy& p = *merged;

  // Relative extends resolve against the extending file's own directory at every step.
  EXPECT_THAT(p.chain, ElementsAre(kExtendsDir + "/child.yaml", kExtendsDir + "/base/middle.yaml",
                                   kExtendsDir + "/shared.yaml", "profile:default"));
  EXPECT_EQ(p.source, kExtendsDir + "/child.yaml <- " + kExtendsDir + "/base/middle.yaml <- " +
                          kExtendsDir + "/shared.yaml <- profile:default");
  EXPECT_FALSE(p.extends.has_value());

  Result<Policy> base = LoadProfile("default", {});
  ASSERT_TRUE(base.ok());
  // Lists: base entries first, duplicates kept once at their first (base) position.
  std::vector<std::string> exec = Paths(base->filesystem.exec);
  exec.push_back("/opt/middle");
  exec.push_back("/opt/child");
  EXPECT_EQ(Paths(p.filesystem.exec), exec);
  EXPECT_EQ(p.filesystem.exec[0].mark.file, "profile:default");  // /usr: the default's entry
  std::vector<std::string> read = Paths(base->filesystem.read);
  read.push_back("/srv/shared");
  EXPECT_EQ(Paths(p.filesystem.read), read);
  std::vector<std::string> deny = Paths(base->filesystem.deny);
  deny.push_back("~/child-secret");
  EXPECT_EQ(Paths(p.filesystem.deny), deny);
  EXPECT_EQ(p.filesystem.deny.back().mark, (SourceMark{kExtendsDir + "/child.yaml", 5, 18}));

  EXPECT_THAT(p.env.pass, ElementsAre("LANG", "LC_ALL", "LC_CTYPE", "TZ", "CHILD_VAR"));
  EXPECT_EQ(p.env.set, (std::map<std::string, std::string>{
                           {"MODE", "child"}, {"ONLY_CHILD", "1"}, {"ONLY_MIDDLE", "yes"}}));
  EXPECT_EQ(p.env.set_marks.at("MODE").file, kExtendsDir + "/child.yaml");
  EXPECT_EQ(p.env.set_marks.at("ONLY_MIDDLE").file, kExtendsDir + "/base/middle.yaml");

  EXPECT_EQ(p.limits.processes, 128u);           // child overrides middle overrides default
  EXPECT_EQ(p.limits.open_files, 4096u);         // default
  EXPECT_EQ(p.limits.memory, 2ULL << 30);        // middle
  EXPECT_EQ(p.limits.core_dumps, false);         // default
  EXPECT_FALSE(p.limits.file_size.has_value());  // nobody

  ASSERT_EQ(p.network.allow.size(), 2u);
  EXPECT_EQ(p.network.allow[0].host, "middle.example.com");
  EXPECT_EQ(p.network.allow[1].host, "child.example.com");

  // monitor: each field the derived policy sets replaces the base's.
  EXPECT_EQ(p.monitor.files, FilesMonitoring::kOff);  // child over middle, default
  ASSERT_TRUE(p.monitor.audit_log.has_value());
  EXPECT_EQ(p.monitor.audit_log->path, "~/child.jsonl");  // child over middle
  EXPECT_EQ(p.monitor.audit_log->mark, (SourceMark{kExtendsDir + "/child.yaml", 15, 14}));
  EXPECT_EQ(p.monitor.audit_log_max_size, 1ULL << 20);  // middle
  EXPECT_EQ(p.monitor.audit_log_files, 2u);             // child
}

TEST(ResolveExtendsTest, MonitorFromTheBaseWhenTheDerivedPolicyIsSilent) {
  TempDir dir;
  dir.Write("base.yaml",
            "version: 1\nmonitor: {files: all, audit_log: /var/log/a.jsonl, audit_log_files: 7}\n");
  Result<Policy> leaf = LoadPolicyFile(
      dir.Write("leaf.yaml", "version: 1\nextends: base.yaml\nmonitor: {audit_log_files: 3}\n"));
  ASSERT_TRUE(leaf.ok()) << leaf.error().Describe();
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_TRUE(merged.ok()) << merged.error().Describe();
  EXPECT_EQ(merged->monitor.files, FilesMonitoring::kAll);
  ASSERT_TRUE(merged->monitor.audit_log.has_value());
  EXPECT_EQ(merged->monitor.audit_log->path, "/var/log/a.jsonl");
  EXPECT_EQ(merged->monitor.audit_log->mark.file, dir.path() + "/base.yaml");
  EXPECT_FALSE(merged->monitor.audit_log_max_size.has_value());
  EXPECT_EQ(merged->monitor.audit_log_files, 3u);
}

TEST(ResolveExtendsTest, ProfileFromASearchDir) {
  Result<Policy> leaf = ParsePolicy("version: 1\nextends: custom\n", "inline.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {kDataDir + "/profiles"});
  ASSERT_TRUE(merged.ok()) << merged.error().Describe();
  EXPECT_THAT(merged->chain,
              ElementsAre("inline.yaml", kDataDir + "/profiles/custom.yaml", "profile:default"));
  EXPECT_EQ(merged->source,
            "inline.yaml <- " + kDataDir + "/profiles/custom.yaml <- profile:default");
  EXPECT_THAT(Paths(merged->filesystem.read), ElementsAre("/etc", "/opt/custom"));
}

TEST(ResolveExtendsTest, Cycle) {
  Result<Policy> leaf = LoadPolicyFile(kExtendsDir + "/cycle_a.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(
      merged.error().message,
      kExtendsDir + "/cycle_b.yaml:2:10: extends 'cycle_a.yaml': extends cycle: " + kExtendsDir +
          "/cycle_a.yaml -> " + kExtendsDir + "/cycle_b.yaml -> " + kExtendsDir + "/cycle_a.yaml");
}

TEST(ResolveExtendsTest, SelfReference) {
  Result<Policy> leaf = LoadPolicyFile(kExtendsDir + "/self.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().message, kExtendsDir + "/self.yaml:2:10: extends './self.yaml': " +
                                        "extends cycle: " + kExtendsDir + "/self.yaml -> " +
                                        kExtendsDir + "/self.yaml");
}

TEST(ResolveExtendsTest, ProfileCycleThroughSearchDir) {
  TempDir dir;
  dir.Write("a.yaml", "version: 1\nextends: b\n");
  dir.Write("b.yaml", "version: 1\nextends: a\n");
  Result<Policy> leaf = LoadProfile("a", {dir.path()});
  ASSERT_TRUE(leaf.ok()) << leaf.error().Describe();
  Result<Policy> merged = ResolveExtends(*leaf, {dir.path()});
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.error().message,
              EndsWith("extends cycle: " + dir.path() + "/a.yaml -> " + dir.path() + "/b.yaml -> " +
                       dir.path() + "/a.yaml"));
}

// p0 extends p1 extends ... p<hops>, which extends nothing.
std::string WriteChain(const TempDir& dir, int hops) {
  for (int i = 0; i < hops; ++i) {
    dir.Write("p" + std::to_string(i) + ".yaml",
              "version: 1\nextends: p" + std::to_string(i + 1) + ".yaml\n");
  }
  dir.Write("p" + std::to_string(hops) + ".yaml", "version: 1\nfilesystem: {read: [/end]}\n");
  return dir.path() + "/p0.yaml";
}

TEST(ResolveExtendsTest, SixteenHopsIsTheLimit) {
  TempDir ok_dir;
  Result<Policy> leaf = LoadPolicyFile(WriteChain(ok_dir, kMaxExtendsDepth));
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_TRUE(merged.ok()) << merged.error().Describe();
  EXPECT_EQ(merged->chain.size(), static_cast<size_t>(kMaxExtendsDepth + 1));
  EXPECT_THAT(Paths(merged->filesystem.read), ElementsAre("/end"));

  TempDir deep_dir;
  leaf = LoadPolicyFile(WriteChain(deep_dir, kMaxExtendsDepth + 1));
  ASSERT_TRUE(leaf.ok());
  merged = ResolveExtends(*leaf, {});
  ASSERT_FALSE(merged.ok());
  const std::string& d = deep_dir.path();
  EXPECT_THAT(merged.error().message,
              StartsWith(d + "/p16.yaml:2:10: extends 'p17.yaml': extends chain deeper than 16: " +
                         d + "/p0.yaml -> " + d + "/p1.yaml -> "));
  EXPECT_THAT(merged.error().message, EndsWith(d + "/p16.yaml -> ..."));
}

TEST(ResolveExtendsTest, MissingBaseFile) {
  Result<Policy> leaf = LoadPolicyFile(kExtendsDir + "/missing_base.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().code, ENOENT);
  EXPECT_EQ(merged.error().Describe(),
            kExtendsDir + "/missing_base.yaml:2:10: extends 'not_there.yaml': cannot load " +
                "policy: cannot open " + kExtendsDir + "/not_there.yaml: " + std::strerror(ENOENT));
}

TEST(ResolveExtendsTest, BrokenBaseFile) {
  Result<Policy> leaf = LoadPolicyFile(kExtendsDir + "/bad_base.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().message,
            kExtendsDir + "/bad_base.yaml:2:10: extends '../profiles/broken.yaml': " + kDataDir +
                "/profiles/broken.yaml:3:14: limits.processes: expected a positive integer, "
                "got 'lots'");
}

TEST(ResolveExtendsTest, UnknownProfile) {
  Result<Policy> leaf = ParsePolicy("version: 1\nextends: nodejs\n", "x.yaml");
  ASSERT_TRUE(leaf.ok());
  Result<Policy> merged = ResolveExtends(*leaf, {});
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.error().message,
              StartsWith("x.yaml:2:10: extends 'nodejs': unknown profile 'nodejs' (available: "));
}

}  // namespace
}  // namespace gander::policies
