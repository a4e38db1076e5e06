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

}  // namespace
}  // namespace gander::learn
