#include "vet/report.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

namespace gander::vet {
namespace {

using nlohmann::json;

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string CountsLine(const std::vector<Finding>& findings) {
  std::map<Severity, int> counts;
  for (const auto& f : findings) ++counts[f.severity];
  std::string out;
  for (Severity s : {Severity::kHigh, Severity::kMedium, Severity::kLow, Severity::kInfo}) {
    out += (out.empty() ? "" : ", ") + std::to_string(counts[s]) + " " + SeverityName(s);
  }
  return out;
}

std::string Verdict(const Report& r) {
  if (!r.complete) return "INCOMPLETE: " + r.problem;
  int status = ExitStatus(r.findings, r.fail_on);
  return status == kExitClean
             ? std::string("PASS (nothing at or above ") + SeverityName(r.fail_on) + ")"
             : std::string("FAIL (findings at or above ") + SeverityName(r.fail_on) + ")";
}

std::string Upper(const char* s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

void PrintText(const Report& r, std::ostream& out) {
  out << "gander audit: " << Join(r.command, " ") << "\n";
  out << "  server:    " << (r.server.empty() ? "(no answer)" : r.server)
      << (r.protocol.empty() ? "" : ", protocol " + r.protocol) << "\n";
  out << "  workspace: " << r.workspace << "\n";
  out << "  fake home: " << r.home << " (bait: " << r.bait.size() << " files)\n";
  out << "  tools (" << r.tools.size() << "): " << Join(r.tools, ", ") << "\n";
  out << "  prompts (" << r.prompts.size() << "), resources (" << r.resources.size() << ")\n";
  if (!r.exit.empty()) out << "  ended:     " << r.exit << "\n";
  if (r.exercised) {
    out << "\nTool calls (--exercise)\n";
    if (r.calls.empty()) out << "  none\n";
    for (const auto& c : r.calls) {
      out << "  " << c.tool << " " << c.arguments << " -> " << c.outcome << "\n";
    }
  }
  for (Category cat : kAllCategories) {
    out << "\n" << CategoryTitle(cat) << "\n";
    bool any = false;
    for (const auto& f : r.findings) {
      if (f.category != cat) continue;
      any = true;
      out << "  [" << Upper(SeverityName(f.severity)) << "] " << f.summary;
      if (f.count > 1) out << " (x" << f.count << ")";
      if (!f.tool.empty()) out << "  {" << f.tool << "}";
      out << "\n";
      if (!f.detail.empty()) out << "      " << f.detail << "\n";
    }
    if (!any) out << "  none\n";
  }
  out << "\nFindings: " << CountsLine(r.findings) << "\n";
  out << "Verdict: " << Verdict(r) << "\n";
  if (!r.audit_log.empty()) out << "Audit log kept: " << r.audit_log << "\n";
}

// Markdown table cells: no pipes or newlines.
std::string Cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

void PrintMarkdown(const Report& r, std::ostream& out) {
  out << "# gander audit: `" << Join(r.command, " ") << "`\n\n";
  out << "- **Verdict**: " << Verdict(r) << "\n";
  out << "- **Findings**: " << CountsLine(r.findings) << "\n";
  out << "- **Server**: " << (r.server.empty() ? "(no answer)" : r.server)
      << (r.protocol.empty() ? "" : ", protocol " + r.protocol) << "\n";
  out << "- **Tools** (" << r.tools.size() << "): " << Join(r.tools, ", ") << "\n";
  out << "- **Prompts**: " << r.prompts.size() << ", **resources**: " << r.resources.size() << "\n";
  out << "- **Workspace**: `" << r.workspace << "`, **fake home**: `" << r.home << "`\n";
  if (!r.exit.empty()) out << "- **Ended**: " << r.exit << "\n";
  if (r.exercised) {
    out << "\n## Tool calls (--exercise)\n\n";
    if (r.calls.empty()) out << "None.\n";
    if (!r.calls.empty()) out << "| tool | arguments | outcome |\n|---|---|---|\n";
    for (const auto& c : r.calls) {
      out << "| " << Cell(c.tool) << " | `" << Cell(c.arguments) << "` | " << Cell(c.outcome)
          << " |\n";
    }
  }
  for (Category cat : kAllCategories) {
    out << "\n## " << CategoryTitle(cat) << "\n\n";
    bool any = false;
    for (const auto& f : r.findings) {
      if (f.category != cat) continue;
      if (!any) out << "| severity | what | detail | tool call | count |\n|---|---|---|---|---:|\n";
      any = true;
      out << "| " << SeverityName(f.severity) << " | " << Cell(f.summary) << " | " << Cell(f.detail)
          << " | " << Cell(f.tool) << " | " << f.count << " |\n";
    }
    if (!any) out << "None.\n";
  }
}

void PrintJson(const Report& r, std::ostream& out) {
  json findings = json::array();
  for (const auto& f : r.findings) {
    findings.push_back({{"severity", SeverityName(f.severity)},
                        {"category", CategoryName(f.category)},
                        {"summary", f.summary},
                        {"detail", f.detail},
                        {"tool", f.tool},
                        {"count", f.count}});
  }
  json calls = json::array();
  for (const auto& c : r.calls) {
    calls.push_back({{"tool", c.tool},
                     {"arguments", json::parse(c.arguments, nullptr, false).is_discarded()
                                       ? json(c.arguments)
                                       : json::parse(c.arguments)},
                     {"outcome", c.outcome}});
  }
  std::map<std::string, int> counts;
  for (Severity s : {Severity::kHigh, Severity::kMedium, Severity::kLow, Severity::kInfo}) {
    counts[SeverityName(s)] = 0;
  }
  for (const auto& f : r.findings) ++counts[SeverityName(f.severity)];
  json doc = {{"gander_audit", 1},
              {"command", r.command},
              {"workspace", r.workspace},
              {"home", r.home},
              {"bait", r.bait},
              {"server", r.server},
              {"protocol", r.protocol},
              {"tools", r.tools},
              {"prompts", r.prompts},
              {"resources", r.resources},
              {"exercised", r.exercised},
              {"calls", calls},
              {"complete", r.complete},
              {"problem", r.problem},
              {"exit", r.exit},
              {"findings", findings},
              {"counts", counts},
              {"highest", SeverityName(Highest(r.findings))},
              {"fail_on", SeverityName(r.fail_on)},
              {"failed", !r.complete || ExitStatus(r.findings, r.fail_on) != kExitClean},
              {"audit_log", r.audit_log}};
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace

void SortFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.category != b.category) return a.category < b.category;
    return a.severity > b.severity;
  });
}

void PrintReport(const Report& report, Format format, std::ostream& out) {
  switch (format) {
    case Format::kText:
      PrintText(report, out);
      break;
    case Format::kMarkdown:
      PrintMarkdown(report, out);
      break;
    case Format::kJson:
      PrintJson(report, out);
      break;
  }
}

}  // namespace gander::vet
