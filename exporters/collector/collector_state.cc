// The collector's state file (see collector_state.h).
#include "exporters/collector/collector_state.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "events/event_json.h"

namespace gander::exporters::collector {

constexpr int kStateVersion = 1;

LauncherLedger::Check LauncherLedger::Classify(const std::string& launcher, uint64_t seq) const {
  auto it = entries_.find(launcher);
  uint64_t last = it == entries_.end() ? 0 : it->second.last_seq;
  if (last == 0 || seq == last + 1) return Check::kApply;
  if (seq <= last) return Check::kDuplicate;
  return Check::kGap;
}

void LauncherLedger::Applied(const std::string& launcher, uint64_t seq) {
  entries_[launcher].last_seq = seq;
}

LauncherLedger::Entry& LauncherLedger::Touch(const std::string& launcher,
                                             std::string_view extension, int64_t now_unix) {
  Entry& e = entries_[launcher];
  e.extension = extension;
  e.seen_unix = now_unix;
  return e;
}

uint64_t LauncherLedger::LastSeq(const std::string& launcher) const {
  auto it = entries_.find(launcher);
  return it == entries_.end() ? 0 : it->second.last_seq;
}

void LauncherLedger::Prune(int64_t now_unix, int64_t max_age_s) {
  std::erase_if(entries_, [&](const auto& e) { return now_unix - e.second.seen_unix > max_age_s; });
}

Status SaveState(const std::string& path, const MetricStore& store, const LabelBounds& bounds,
                 const LauncherLedger& ledger) {
  // Written as text, not through a JSON tree: see MetricStore::AppendSnapshot. The labels a
  // launcher names are sanitized or one of a fixed set (event_metrics.cc), the wire's lines are
  // checked UTF-8 before parsing; should a stray byte reach the file anyway it becomes U+FFFD,
  // so the file stays readable, as nlohmann's dump with error_handler_t::replace did before.
  std::string text = "{\"version\":" + std::to_string(kStateVersion) + ",\"metrics\":";
  store.AppendSnapshot(text);
  text += ",\"labels\":";
  bounds.AppendSnapshot(text);
  text += ",\"launchers\":{";
  bool first = true;
  for (const auto& [id, e] : ledger.entries()) {
    if (!std::exchange(first, false)) text += ',';
    events::AppendJsonText(text, id);
    text += ":{\"seq\":" + std::to_string(e.last_seq) + ",\"extension\":";
    events::AppendJsonText(text, e.extension);
    text += ",\"seen\":" + std::to_string(e.seen_unix) + '}';
  }
  text += "}}\n";

  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("open " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Error e = ErrnoError("write " + tmp);
      close(fd);
      unlink(tmp.c_str());
      return e;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return ErrnoError("close " + tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0) return ErrnoError("rename " + tmp);
  return {};
}

Status LoadState(const std::string& path, MetricStore& store, LabelBounds& bounds,
                 LauncherLedger& ledger) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno == ENOENT ? Status() : ErrnoError("open " + path);
  std::stringstream text;
  text << in.rdbuf();
  // nlohmann reports bad types by exception: they stop here.
  try {
    auto state = nlohmann::json::parse(text.str());
    if (state.value("version", 0) != kStateVersion) return MakeError(path + ": unknown version");
    if (auto s = store.Restore(state.at("metrics")); !s) return s.error().Context(path);
    if (auto s = bounds.Restore(state.at("labels")); !s) return s.error().Context(path);
    for (const auto& [id, e] : state.at("launchers").items()) {
      auto& entry = ledger.entries()[id];
      entry.last_seq = e.at("seq").get<uint64_t>();
      entry.extension = e.at("extension").get<std::string>();
      entry.seen_unix = e.at("seen").get<int64_t>();
    }
  } catch (const nlohmann::json::exception& e) {
    return MakeError(path + ": " + e.what());
  }
  return {};
}

}  // namespace gander::exporters::collector
