// SpawnDetached and CollectorClient::Create with a start command that cannot run: the failure
// is known at once, so a launcher whose gander-collect is missing falls back to the audit log
// without waiting start_wait for a collector that never comes (issue 20: 1.5 s per start).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "exporters/collector_client.h"
#include "exporters/collector_paths.h"

namespace gander::exporters {
namespace {

TEST(SpawnDetached, MissingBinaryIsAnError) {
  Status s = SpawnDetached({"/nonexistent/gander-collect", "--log-file", "/dev/null"});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ENOENT);
}

TEST(SpawnDetached, RunnableBinaryIsFine) { EXPECT_TRUE(SpawnDetached({"/bin/true"})); }

TEST(CollectorClient, UnrunnableStartCommandFallsBackWithoutWaiting) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gander-spawn-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  CollectorClientOptions options;
  options.hello.extension = "spawn-test";
  options.socket_path = (dir / "none.sock").string();
  options.start_command = {"/nonexistent/gander-collect"};
  options.start_wait = std::chrono::hours(1);  // waiting for it would hang the test
  options.audit_log.path = (dir / "audit.jsonl").string();
  auto client = CollectorClient::Create(std::move(options));
  EXPECT_TRUE(client->fallback());
  ASSERT_TRUE(client->last_error());
  EXPECT_NE(client->last_error()->Describe().find("gander-collect"), std::string::npos)
      << client->last_error()->Describe();
  client.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gander::exporters
