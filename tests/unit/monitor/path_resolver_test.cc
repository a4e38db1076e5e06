// Path resolution as the kernel would see it, against a fake process: relative paths, dirfds,
// "..", the /proc and /dev magic links, empty, overlong, NUL-cut and non-UTF-8 paths.
#include "monitor/path_resolver.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <limits.h>

#include <string>

#include "events/event.h"
#include "tests/unit/expect_table.h"

namespace gander::monitor {
namespace {

using gander::unit::ExpectMaps;

using namespace std::string_literals;

class PathResolverTest : public ::testing::Test {
 protected:
  PathResolverTest() {
    view_.cwd_path = "/home/u/proj";
    view_.fds = {{0, "pipe:[100]"}, {1, "/dev/null"},    {3, "/home/u/.ssh"},
                 {4, "/etc"},       {5, "socket:[200]"}, {6, "/home/u/proj/src"}};
    view_.own_pid = 42;
  }

  // The resolved path, or "E<errno>" when resolution fails.
  std::string Resolve(std::string_view raw, std::optional<std::string> dirfd = std::nullopt,
                      ResolveFlags flags = {}) const {
    auto r = ResolvePath(raw, std::move(dirfd), view_, flags);
    if (!r) return "E" + std::to_string(r.error().code);
    return *r;
  }

  // Resolve with no dirfd and no flags, for ExpectMaps.
  auto Resolved() const {
    return [this](const std::string& raw) { return Resolve(raw); };
  }

  FixedProcessView view_;
};

TEST_F(PathResolverTest, AbsolutePathsAreNormalisedLexically) {
  ExpectMaps(Resolved(), {{"/etc/passwd", "/etc/passwd"},
                          {"//etc///passwd", "/etc/passwd"},
                          {"/etc/./ssl/../passwd", "/etc/passwd"},
                          {"/usr/lib/", "/usr/lib"},
                          {"/", "/"}});
}

// A plain absolute path comes back as it is without a walk (ResolvePath's shortcut): only
// where nothing could change it. Next to it, what the shortcut must leave to the walk.
TEST_F(PathResolverTest, PlainPathsComeBackAsTheyAreAndOnlyThose) {
  ExpectMaps(Resolved(), {{"/home/u/proj/CMakeLists.txt", "/home/u/proj/CMakeLists.txt"},
                          {"/procfs/x", "/procfs/x"},
                          {"/devices/x", "/devices/x"},
                          {"/x/proc/self/cwd", "/x/proc/self/cwd"},
                          {"/proc/self/cwd/x", "/home/u/proj/x"},
                          {"/dev/fd/4/passwd", "/etc/passwd"},
                          {"/dev/stdout", "/dev/null"},
                          {"/etc/x/../passwd", "/etc/passwd"},
                          {"/etc//passwd", "/etc/passwd"},
                          {"/etc/./passwd", "/etc/passwd"},
                          {"/etc/", "/etc"}});
  view_.root_path = "/jail";
  EXPECT_EQ(Resolve("/etc/passwd"), "/jail/etc/passwd") << "not under the root /";
}

TEST_F(PathResolverTest, DotDotNeverClimbsAboveTheRoot) {
  ExpectMaps(
      Resolved(),
      {{"/..", "/"}, {"/../../etc/shadow", "/etc/shadow"}, {"../../../../../../etc", "/etc"}});
}

TEST_F(PathResolverTest, RelativePathsStartAtTheCwd) {
  ExpectMaps(Resolved(), {{"src/main.c", "/home/u/proj/src/main.c"},
                          {"./a/./b//c/../d", "/home/u/proj/a/b/d"},
                          {"../.ssh/id_rsa", "/home/u/.ssh/id_rsa"},
                          {".", "/home/u/proj"}});
}

TEST_F(PathResolverTest, RelativePathsStartAtTheDirfd) {
  EXPECT_EQ(Resolve("passwd", "/etc"), "/etc/passwd");
  EXPECT_EQ(Resolve("../x", "/home/u/proj/src"), "/home/u/proj/x");
  // An absolute path ignores the dirfd, as openat does.
  EXPECT_EQ(Resolve("/usr/bin/env", "/etc"), "/usr/bin/env");
}

TEST_F(PathResolverTest, RelativePathAgainstANonDirectoryFdIsEnotdir) {
  EXPECT_EQ(Resolve("x", "socket:[200]"), "E" + std::to_string(ENOTDIR));
}

TEST_F(PathResolverTest, ProcSelfFdIsWhatTheFdPointsAt) {
  ExpectMaps(Resolved(), {{"/proc/self/fd/3/id_rsa", "/home/u/.ssh/id_rsa"},
                          {"/proc/self/fd/4", "/etc"},
                          {"/proc/thread-self/fd/3/config", "/home/u/.ssh/config"},
                          {"/proc/self/task/43/fd/4/shadow", "/etc/shadow"},
                          {"/proc/42/task/42/fd/4/shadow", "/etc/shadow"},
                          {"/dev/fd/3/known_hosts", "/home/u/.ssh/known_hosts"},
                          {"/dev/stdout", "/dev/null"}});
  EXPECT_EQ(Resolve("/proc/42/fd/3/id_rsa"), "/home/u/.ssh/id_rsa") << "our own pid";
}

TEST_F(PathResolverTest, DotDotAfterAMagicLinkClimbsFromItsTarget) {
  EXPECT_EQ(Resolve("/proc/self/fd/3/../.aws/credentials"), "/home/u/.aws/credentials");
  EXPECT_EQ(Resolve("/proc/self/fd/../fd/4/shadow"), "/etc/shadow");
}

TEST_F(PathResolverTest, MagicLinksAreFoundThroughRelativePaths) {
  EXPECT_EQ(Resolve("fd/3/id_rsa", "/proc/self"), "/home/u/.ssh/id_rsa");
  view_.cwd_path = "/proc/self/fd";
  EXPECT_EQ(Resolve("4/shadow"), "/etc/shadow");
  view_.cwd_path = "/proc";
  EXPECT_EQ(Resolve("./self/./fd//3"), "/home/u/.ssh");
}

TEST_F(PathResolverTest, ProcSelfCwdAndRoot) {
  ExpectMaps(Resolved(), {{"/proc/self/cwd/../.ssh/id_rsa", "/home/u/.ssh/id_rsa"},
                          {"/proc/self/root/etc/shadow", "/etc/shadow"},
                          {"/proc/thread-self/cwd", "/home/u/proj"}});
}

TEST_F(PathResolverTest, OtherProcessesAndNonMagicEntriesAreLeftAsWritten) {
  EXPECT_EQ(Resolve("/proc/1/fd/3"), "/proc/1/fd/3");
  EXPECT_EQ(Resolve("/proc/self/exe"), "/proc/self/exe");
  EXPECT_EQ(Resolve("/proc/self/fd/03"), "/proc/self/fd/03") << "the kernel rejects 03 too";
  EXPECT_EQ(Resolve("/proc/self/fdinfo/3"), "/proc/self/fdinfo/3");
  EXPECT_EQ(Resolve("/proc/self/status"), "/proc/self/status");
  view_.own_pid.reset();
  EXPECT_EQ(Resolve("/proc/42/fd/3"), "/proc/42/fd/3") << "own pid unknown";
}

TEST_F(PathResolverTest, FdThatIsNotAFileSystemObject) {
  EXPECT_EQ(Resolve("/proc/self/fd/0"), "pipe:[100]");
  EXPECT_EQ(Resolve("/dev/stdin"), "pipe:[100]");
  EXPECT_EQ(Resolve("/proc/self/fd/5/x"), "E" + std::to_string(ENOTDIR));
  EXPECT_EQ(Resolve("/proc/self/fd/5/"), "E" + std::to_string(ENOTDIR));
}

TEST_F(PathResolverTest, ClosedFdIsEnoent) {
  EXPECT_EQ(Resolve("/proc/self/fd/9/x"), "E" + std::to_string(ENOENT));
}

TEST_F(PathResolverTest, ChrootedProcessResolvesWithinItsRoot) {
  view_.root_path = "/jail";
  view_.cwd_path = "/jail/work";
  ExpectMaps(Resolved(), {{"/etc/passwd", "/jail/etc/passwd"},
                          {"/../../x", "/jail/x"},
                          {"../../../x", "/jail/x"},
                          {"/proc/self/root", "/jail"}});
  EXPECT_EQ(Resolve("/proc/self/fd/4"), "/etc") << "fd targets are in the view already";
}

TEST_F(PathResolverTest, EmptyPath) {
  EXPECT_EQ(Resolve(""), "E" + std::to_string(ENOENT));
  EXPECT_EQ(Resolve("", "/etc"), "E" + std::to_string(ENOENT));
  ResolveFlags empty{.empty_path = true};
  EXPECT_EQ(Resolve("", "/etc", empty), "/etc");
  EXPECT_EQ(Resolve("", std::nullopt, empty), "/home/u/proj");
  EXPECT_EQ(Resolve("", "socket:[200]", empty), "socket:[200]");
}

TEST_F(PathResolverTest, PathEndsAtTheFirstNul) {
  EXPECT_EQ(Resolve("/etc/passwd\0/../shadow"s), "/etc/passwd");
  EXPECT_EQ(Resolve("\0/etc/passwd"s), "E" + std::to_string(ENOENT));
  // A long buffer is fine if the NUL comes early.
  std::string buffer = "/etc/hosts"s + '\0' + std::string(2 * PATH_MAX, 'x');
  EXPECT_EQ(Resolve(buffer), "/etc/hosts");
}

TEST_F(PathResolverTest, OverlongPathIsEnametoolong) {
  std::string longest = "/" + std::string(PATH_MAX - 2, 'a');  // PATH_MAX - 1 bytes: fits
  EXPECT_EQ(Resolve(longest), longest);
  EXPECT_EQ(Resolve(longest + "a"), "E" + std::to_string(ENAMETOOLONG));
  EXPECT_EQ(Resolve(std::string(3 * PATH_MAX, '/')), "E" + std::to_string(ENAMETOOLONG));
}

TEST_F(PathResolverTest, RawPathForEventIsCutAtNulAndBounded) {
  RawPath short_path = RawPathForEvent("/etc/passwd\0junk"s);
  EXPECT_EQ(short_path.text, "/etc/passwd");
  EXPECT_FALSE(short_path.truncated);
  RawPath long_path = RawPathForEvent(std::string(PATH_MAX, 'a'));
  EXPECT_EQ(long_path.text.size(), events::kMaxRawPathBytes);
  EXPECT_TRUE(long_path.truncated);
}

TEST_F(PathResolverTest, NonUtf8BytesArePreserved) {
  EXPECT_EQ(Resolve("/tmp/\xff\xfe/../\xc3(x"), "/tmp/\xc3(x");
  EXPECT_EQ(Resolve("caf\xe9"), "/home/u/proj/caf\xe9");
}

TEST_F(PathResolverTest, ViewErrorsPropagateWithTheirErrno) {
  struct GoneProcess : FixedProcessView {
    Result<std::string> cwd() const override { return Error{ESRCH, "readlink cwd"}; }
  } gone;
  auto r = ResolvePath("relative", std::nullopt, gone);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ESRCH);
  EXPECT_TRUE(ResolvePath("/absolute", std::nullopt, gone).ok()) << "the cwd is not needed";
}

TEST_F(PathResolverTest, SymlinkTargets) {
  auto target = [&](std::string_view link, std::string_view text) {
    auto r = ResolveSymlinkTarget(link, text, view_);
    return r ? *r : "E" + std::to_string(r.error().code);
  };
  EXPECT_EQ(target("/home/u/proj/keys", "../.ssh"), "/home/u/.ssh");
  EXPECT_EQ(target("/home/u/proj/a/b", "../../.aws/credentials"), "/home/u/.aws/credentials");
  EXPECT_EQ(target("/home/u/proj/passwd", "/etc/passwd"), "/etc/passwd");
  EXPECT_EQ(target("/home/u/proj/fd", "/proc/self/fd/3"), "/home/u/.ssh");
  EXPECT_EQ(target("/x", "../../y"), "/y");
  EXPECT_EQ(target("/home/u/proj/l", ""), "E" + std::to_string(ENOENT));
  view_.root_path = "/jail";
  EXPECT_EQ(target("/jail/w/l", "/etc/passwd"), "/jail/etc/passwd");
}

}  // namespace
}  // namespace gander::monitor
