#include "vet/finding.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "vet/report.h"

namespace gander::vet {
namespace {

Finding Of(Severity s, Category c = Category::kFile) { return {s, c, "x", "", "", 1}; }

TEST(Severity, NamesRoundTrip) {
  for (Severity s : {Severity::kInfo, Severity::kLow, Severity::kMedium, Severity::kHigh}) {
    EXPECT_EQ(ParseSeverity(SeverityName(s)), s);
  }
  EXPECT_FALSE(ParseSeverity("critical"));
  EXPECT_FALSE(ParseSeverity("HIGH"));
}

TEST(ExitStatus, AtOrAboveTheThresholdFails) {
  std::vector<Finding> findings = {Of(Severity::kInfo), Of(Severity::kMedium)};
  EXPECT_EQ(ExitStatus(findings, Severity::kHigh), kExitClean);
  EXPECT_EQ(ExitStatus(findings, Severity::kMedium), kExitFindings);
  EXPECT_EQ(ExitStatus(findings, Severity::kLow), kExitFindings);
  EXPECT_EQ(ExitStatus({}, Severity::kLow), kExitClean);
  EXPECT_EQ(ExitStatus({Of(Severity::kInfo)}, Severity::kLow), kExitClean);
  EXPECT_EQ(ExitStatus({Of(Severity::kHigh)}, Severity::kHigh), kExitFindings);
  EXPECT_EQ(Highest(findings), Severity::kMedium);
  EXPECT_EQ(Highest({}), Severity::kInfo);
}

TEST(Report, SortedBySectionThenSeverity) {
  std::vector<Finding> findings = {Of(Severity::kLow, Category::kNetwork),
                                   Of(Severity::kHigh, Category::kNetwork),
                                   Of(Severity::kMedium, Category::kBait)};
  SortFindings(findings);
  EXPECT_EQ(findings[0].category, Category::kBait);
  EXPECT_EQ(findings[1].severity, Severity::kHigh);
  EXPECT_EQ(findings[2].severity, Severity::kLow);
}

Report Sample() {
  Report r;
  r.command = {"node", "server.js"};
  r.workspace = "/tmp/ws";
  r.home = "/tmp/home";
  r.server = "demo 1.0";
  r.tools = {"add"};
  r.findings = {
      {Severity::kHigh, Category::kBait, "read ~/.ssh/id_rsa", "class denied", "(startup)", 1},
      {Severity::kMedium, Category::kNetwork, "connect to 127.0.0.2:9/tcp | x", "denied", "add",
       2}};
  return r;
}

TEST(Report, TextHasEverySectionAndTheVerdict) {
  std::ostringstream out;
  PrintReport(Sample(), Format::kText, out);
  std::string text = out.str();
  for (Category c : kAllCategories) EXPECT_NE(text.find(CategoryTitle(c)), std::string::npos);
  EXPECT_NE(text.find("[HIGH] read ~/.ssh/id_rsa"), std::string::npos) << text;
  EXPECT_NE(text.find("(x2)"), std::string::npos);
  EXPECT_NE(text.find("Verdict: FAIL"), std::string::npos);
}

TEST(Report, MarkdownEscapesPipes) {
  std::ostringstream out;
  PrintReport(Sample(), Format::kMarkdown, out);
  EXPECT_NE(out.str().find("127.0.0.2:9/tcp \\| x"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("## Bait files touched"), std::string::npos);
}

TEST(Report, JsonCarriesTheVerdict) {
  Report r = Sample();
  r.fail_on = Severity::kHigh;
  std::ostringstream out;
  PrintReport(r, Format::kJson, out);
  auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["highest"], "high");
  EXPECT_EQ(doc["failed"], true);
  EXPECT_EQ(doc["counts"]["medium"], 1);
  EXPECT_EQ(doc["findings"][1]["count"], 2);
  r.findings.erase(r.findings.begin());
  std::ostringstream clean;
  PrintReport(r, Format::kJson, clean);
  EXPECT_EQ(nlohmann::json::parse(clean.str())["failed"], false);
  r.complete = false;
  std::ostringstream incomplete;
  PrintReport(r, Format::kJson, incomplete);
  EXPECT_EQ(nlohmann::json::parse(incomplete.str())["failed"], true);
}

}  // namespace
}  // namespace gander::vet
