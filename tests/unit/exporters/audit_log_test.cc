// The audit log on a real temporary directory: file mode and flags, per-line and per-batch
// flushing, rotation by size without splitting lines, write errors; and the fan-out sink.
#include "exporters/audit_log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "events/event_json.h"
#include "exporters/fan_out_sink.h"
#include "tests/unit/temp_dir_test.h"

namespace gander::exporters {
namespace {

using events::Event;
using events::LifecycleEvent;
using events::LifecyclePhase;

class AuditLogTest : public unit::TempDirTest {
 protected:
  AuditLogTest() : TempDirTest("audit") {}
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/audit.jsonl";
  }

  std::unique_ptr<AuditLog> OpenLog(AuditLogOptions options) {
    options.path = path_;
    auto log = AuditLog::Open(std::move(options));
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().Describe());
    return log.ok() ? std::move(*log) : nullptr;
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::vector<std::string> Lines(const std::string& path) {
    std::vector<std::string> lines;
    std::string content = Read(path);
    size_t start = 0;
    while (start < content.size()) {
      size_t end = content.find('\n', start);
      EXPECT_NE(end, std::string::npos) << "a line without its newline in " << path;
      if (end == std::string::npos) break;
      lines.push_back(content.substr(start, end - start));
      start = end + 1;
    }
    return lines;
  }
  static bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

  std::string path_;
};

// An event whose line is about `padding` bytes longer than the base, numbered by `n`.
Event Numbered(int n, size_t padding = 0) {
  Event e;
  e.extension = "ext";
  e.payload =
      LifecycleEvent{LifecyclePhase::kStart, std::to_string(n) + ":" + std::string(padding, 'p')};
  return e;
}

int NumberOf(const std::string& line) {
  auto j = nlohmann::json::parse(line);  // throws (failing the test) on a split line
  std::string detail = j["lifecycle"]["detail"];
  return std::stoi(detail.substr(0, detail.find(':')));
}

TEST_F(AuditLogTest, CreatesTheFilePrivateAndCloseOnExec) {
  auto log = OpenLog({});
  ASSERT_TRUE(log);
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Find our fd on the file and check FD_CLOEXEC.
  bool found = false;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (ec || target != path_) continue;
    int fd = std::stoi(entry.path().filename().string());
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    EXPECT_TRUE(fcntl(fd, F_GETFL) & O_APPEND);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST_F(AuditLogTest, PerLineWritesAtOnce) {
  auto log = OpenLog({.flush = AuditLogOptions::FlushMode::kPerLine});
  ASSERT_TRUE(log);
  log->Publish(Numbered(1));
  EXPECT_EQ(Read(path_), events::ToJsonLine(Numbered(1)));
  EXPECT_EQ(log->stats().lines_written, 1u);
}

TEST_F(AuditLogTest, PerBatchWritesAtFlush) {
  auto log = OpenLog({.flush = AuditLogOptions::FlushMode::kPerBatch});
  ASSERT_TRUE(log);
  log->Publish(Numbered(1));
  log->Publish(Numbered(2));
  EXPECT_EQ(Read(path_), "");
  log->Flush();
  EXPECT_EQ(Lines(path_).size(), 2u);
  EXPECT_EQ(log->stats().lines_written, 2u);
}

TEST_F(AuditLogTest, PerBatchWritesEarlyWhenTheBufferFills) {
  auto log = OpenLog({.flush = AuditLogOptions::FlushMode::kPerBatch, .max_buffer_bytes = 300});
  ASSERT_TRUE(log);
  for (int i = 0; i < 3; ++i) log->Publish(Numbered(i, 100));
  EXPECT_GE(Lines(path_).size(), 1u);
}

TEST_F(AuditLogTest, DestructorWritesWhatIsBuffered) {
  {
    auto log = OpenLog({});
    ASSERT_TRUE(log);
    log->Publish(Numbered(1));
  }
  EXPECT_EQ(Lines(path_).size(), 1u);
}

TEST_F(AuditLogTest, AppendsToAnExistingLog) {
  { std::ofstream(path_) << "{\"old\":true}\n"; }
  auto log = OpenLog({.flush = AuditLogOptions::FlushMode::kPerLine});
  ASSERT_TRUE(log);
  log->Publish(Numbered(1));
  auto lines = Lines(path_);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "{\"old\":true}");
}

TEST_F(AuditLogTest, RotatesBySizeKeepingNFilesAndWholeLines) {
  const size_t line_size = events::ToJsonLine(Numbered(10, 150)).size();
  const uint64_t max_bytes = 1000;
  auto log = OpenLog(
      {.max_bytes = max_bytes, .max_files = 2, .flush = AuditLogOptions::FlushMode::kPerBatch});
  ASSERT_TRUE(log);
  const int total = 40;
  for (int i = 10; i < 10 + total; ++i) {
    log->Publish(Numbered(i, 150));
    if (i % 3 == 0) log->Flush();  // batches of varying size
  }
  log->Flush();
  EXPECT_TRUE(Exists(path_ + ".1"));
  EXPECT_TRUE(Exists(path_ + ".2"));
  EXPECT_FALSE(Exists(path_ + ".3"));
  EXPECT_GT(log->stats().rotations, 2u);
  EXPECT_EQ(log->stats().lines_written, static_cast<uint64_t>(total));
  EXPECT_EQ(log->stats().errors, 0u);

  // Oldest first: .2, .1, live. Every line whole, numbers consecutive, each file within size.
  std::vector<int> numbers;
  for (const auto& file : {path_ + ".2", path_ + ".1", path_}) {
    EXPECT_LE(std::filesystem::file_size(file), max_bytes) << file;
    EXPECT_GE(std::filesystem::file_size(file), line_size) << file;
    struct stat st {};
    ASSERT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << file;
    for (const auto& line : Lines(file)) numbers.push_back(NumberOf(line));
  }
  ASSERT_FALSE(numbers.empty());
  for (size_t i = 1; i < numbers.size(); ++i) EXPECT_EQ(numbers[i], numbers[i - 1] + 1);
  EXPECT_EQ(numbers.back(), 10 + total - 1) << "the newest line is in the live file";
}

TEST_F(AuditLogTest, ExistingSizeCountsTowardsRotation) {
  { std::ofstream(path_) << std::string(90, 'x') << "\n"; }
  auto log =
      OpenLog({.max_bytes = 120, .max_files = 1, .flush = AuditLogOptions::FlushMode::kPerLine});
  ASSERT_TRUE(log);
  log->Publish(Numbered(1));
  EXPECT_EQ(Read(path_ + ".1"), std::string(90, 'x') + "\n");
  EXPECT_EQ(Lines(path_).size(), 1u);
}

TEST_F(AuditLogTest, LineLongerThanTheLimitGetsAFileOfItsOwn) {
  auto log =
      OpenLog({.max_bytes = 100, .max_files = 3, .flush = AuditLogOptions::FlushMode::kPerLine});
  ASSERT_TRUE(log);
  log->Publish(Numbered(1, 500));
  log->Publish(Numbered(2, 500));
  EXPECT_EQ(Lines(path_ + ".1").size(), 1u);
  EXPECT_EQ(NumberOf(Lines(path_ + ".1")[0]), 1);
  EXPECT_EQ(NumberOf(Lines(path_)[0]), 2);
}

TEST_F(AuditLogTest, BadOptionsAndMissingDirectoryAreErrors) {
  EXPECT_FALSE(AuditLog::Open({.path = ""}).ok());
  EXPECT_FALSE(AuditLog::Open({.path = path_, .max_bytes = 0}).ok());
  EXPECT_FALSE(AuditLog::Open({.path = path_, .max_files = 0}).ok());
  auto missing = AuditLog::Open({.path = dir_ + "/no/such/dir/audit.jsonl"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ENOENT);
}

TEST(AuditLogErrors, WriteFailuresAreCountedNotFatal) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  auto log = AuditLog::Open({.path = "/dev/full", .flush = AuditLogOptions::FlushMode::kPerLine});
  ASSERT_TRUE(log.ok()) << log.error().Describe();
  (*log)->Publish(Numbered(1));
  (*log)->Publish(Numbered(2));
  EXPECT_EQ((*log)->stats().lines_written, 0u);
  EXPECT_EQ((*log)->stats().lines_lost, 2u);
  EXPECT_EQ((*log)->stats().errors, 2u);
  ASSERT_TRUE((*log)->last_error());
  EXPECT_EQ((*log)->last_error()->code, ENOSPC);
}

// FanOutSink -------------------------------------------------------------------------------

struct CountingSink : events::EventSink {
  int published = 0;
  int flushed = 0;
  void Publish(const Event&) override { ++published; }
  void Flush() override { ++flushed; }
};

TEST(FanOutSink, ForwardsToEverySink) {
  CountingSink a, b;
  FanOutSink fan({&a, nullptr, &b});
  fan.Publish(Numbered(1));
  fan.Publish(Numbered(2));
  fan.Flush();
  EXPECT_EQ(a.published, 2);
  EXPECT_EQ(b.published, 2);
  EXPECT_EQ(a.flushed, 1);
  EXPECT_EQ(b.flushed, 1);
}

}  // namespace
}  // namespace gander::exporters
