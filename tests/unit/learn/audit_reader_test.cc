#include "learn/audit_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

namespace gander::learn {
namespace {

constexpr char kStart[] =
    R"({"v":1,"time":"t","kind":"lifecycle","extension":"ext","pid":1,"sandbox_pid":null,)"
    R"("exe":null,"tool_call":{"state":"startup","tool":null,"request_id":null},)"
    R"("lifecycle":{"what":"start","detail":"sh","info":null}})";

TEST(AuditReader, ReadsRotatedFilesOldestFirstAndAccumulatesRuns) {
  char dir[] = "/tmp/gander-learn-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string log = std::string(dir) + "/ext.jsonl";
  for (const auto& name : {log + ".2", log + ".1", log}) std::ofstream(name) << kStart << "\n";
  EXPECT_EQ(RotatedFiles(log), (std::vector<std::string>{log + ".2", log + ".1", log}));
  auto learned = ReadAuditLogs({log}, "ext");
  ASSERT_TRUE(learned.ok()) << learned.error().Describe();
  EXPECT_EQ(learned->runs, 3u);
  EXPECT_EQ(learned->lines, 3u);
  auto other = ReadAuditLogs({log}, "another");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->lines, 0u);
  EXPECT_FALSE(ReadAuditLogs({log + ".missing"}, "ext").ok());
  for (const auto& name : {log + ".2", log + ".1", log}) unlink(name.c_str());
  rmdir(dir);
}

TEST(AuditReader, CountsDroppedEventsAndSkipsBadLines) {
  Learned l;
  AddAuditLine(
      R"({"v":1,"kind":"lifecycle","extension":"ext","lifecycle":{"what":"events_dropped","detail":"17"}})",
      "ext", l);
  AddAuditLine("{\"v\":2,\"kind\":\"file\"}", "ext", l);
  AddAuditLine("{\"v\":1,\"kind\":\"file\",\"ext", "ext", l);  // half a line (disk full)
  EXPECT_EQ(l.dropped, 17u);
  EXPECT_EQ(l.bad_lines, 2u);
}

TEST(AuditReader, RecordsTheRunsWorkspacesAndRebasesTheirPaths) {
  auto start = [](const std::string& ws) {
    return R"({"v":1,"time":"t","kind":"lifecycle","extension":"ext","pid":1,)"
           R"("sandbox_pid":null,"exe":null,"tool_call":{"state":"startup"},)"
           R"("lifecycle":{"what":"start","detail":"sh","info":{"syscall_accounting":"census",)"
           R"("command_grants":["/opt/n/node_modules"],"workspace":")" +
           ws + R"("}}})";
  };
  auto read = [](const std::string& path) {
    return R"({"v":1,"time":"t","kind":"file","extension":"ext","tool_call":{"state":"one",)"
           R"("tool":"t"},"file":{"path":")" +
           path + R"(","class":"workspace","access":"read"}})";
  };
  Learned l;
  for (const std::string& line :
       {start("/ci/a"), read("/ci/a/src/x.js"), start("/ci/a/sub"), read("/ci/a/sub/y.js"),
        start("/ci/a"), read("/ci/a"), read("/ci/ab/z"), std::string(kStart)}) {
    AddAuditLine(line, "ext", l);
  }
  EXPECT_EQ(l.runs, 4u);
  EXPECT_EQ(l.census_runs, 3u);
  EXPECT_EQ(l.command_grants, (std::vector<std::string>{"/opt/n/node_modules"}));
  EXPECT_EQ(l.workspaces, (std::vector<std::string>{"/ci/a", "/ci/a/sub"}));
  RebaseWorkspaces(l, "/home/u/p");
  std::vector<std::string> paths;
  for (const auto& [path, needs] : l.files) paths.push_back(path);
  // The nested workspace maps its own paths; a sibling with a common prefix is not moved.
  EXPECT_EQ(paths, (std::vector<std::string>{"/ci/ab/z", "/home/u/p", "/home/u/p/src/x.js",
                                             "/home/u/p/y.js"}));
}

}  // namespace
TEST(AuditReader, AGvisorLearningRunCountsAsACensusRun) {
  Learned l;
  AddAuditLine(R"({"v":1,"time":"t","kind":"lifecycle","extension":"ext","pid":1,)"
               R"("lifecycle":{"what":"start","detail":"sh","info":{"backend":"gvisor",)"
               R"("syscall_accounting":"gvisor-census+broker","workspace":"/w"}}})",
               "ext", l);
  AddAuditLine(R"({"v":1,"time":"t","kind":"lifecycle","extension":"ext","pid":1,)"
               R"("lifecycle":{"what":"start","detail":"sh","info":{"backend":"gvisor",)"
               R"("syscall_accounting":"gvisor-strace","workspace":"/w"}}})",
               "ext", l);
  EXPECT_EQ(l.runs, 2u);
  EXPECT_EQ(l.census_runs, 1u);
}

}  // namespace gander::learn
