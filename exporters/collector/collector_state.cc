// The collector's state file (see collector_state.h).
#include "exporters/collector/collector_state.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "common/unique_fd.h"
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

std::string StateSlot(const std::string& path, uint64_t generation) {
  return generation % 2 == 0 ? path : path + ".alt";
}

Status SaveState(const std::string& path, uint64_t generation, const MetricStore& store,
                 const LabelBounds& bounds, const LauncherLedger& ledger) {
  // Written as text, not through a JSON tree: see MetricStore::AppendSnapshot. The labels a
  // launcher names are sanitized or one of a fixed set (event_metrics.cc), the wire's lines are
  // checked UTF-8 before parsing; should a stray byte reach the file anyway it becomes U+FFFD,
  // so the file stays readable, as nlohmann's dump with error_handler_t::replace did before.
  const std::string gen = std::to_string(generation);
  std::string text =
      "{\"version\":" + std::to_string(kStateVersion) + ",\"generation\":" + gen + ",\"metrics\":";
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
  text += "},\"generation_end\":" + gen + "}\n";

  // Overwritten in place, not truncated first and not renamed over: on ext4 either makes the
  // kernel flush the file at once and (rename) free the old inode's blocks, which cost every
  // launcher's exit a third of a millisecond on a two-core machine (docs/collector.md).
  const std::string slot = StateSlot(path, generation);
  UniqueFd fd(open(slot.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return ErrnoError("open " + slot);
  if (fchmod(fd.get(), 0600) != 0) return ErrnoError("chmod " + slot);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = pwrite(fd.get(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError("write " + slot);
    done += static_cast<size_t>(n);
  }
  // Cut to length only when the older text was longer (a truncation costs an inode update).
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat " + slot);
  if (st.st_size > static_cast<off_t>(text.size()) &&
      ftruncate(fd.get(), static_cast<off_t>(text.size())) != 0) {
    return ErrnoError("truncate " + slot);
  }
  if (close(fd.Release()) != 0) return ErrnoError("close " + slot);
  return {};
}

namespace {

// One slot's generation, or an error when it is unreadable, torn or of another version.
Result<uint64_t> ReadSlot(const std::string& slot, nlohmann::json& state) {
  std::ifstream in(slot, std::ios::binary);
  if (!in) return ErrnoError("open " + slot);
  std::stringstream text;
  text << in.rdbuf();
  state = nlohmann::json::parse(text.str(), nullptr, false);
  if (state.is_discarded() || !state.is_object()) return MakeError(slot + ": not JSON");
  // nlohmann reports bad types by exception: they stop here.
  try {
    if (state.value("version", 0) != kStateVersion) return MakeError(slot + ": unknown version");
    // A file of before the two slots has neither: generation 0. A write torn by a crash has
    // the new generation at its start and an older one (or none) at its end.
    uint64_t begin = state.value("generation", uint64_t{0});
    uint64_t end = state.value("generation_end", uint64_t{0});
    if (begin != end) {
      return MakeError(slot + ": torn write (generation " + std::to_string(begin) + ", ends with " +
                       std::to_string(end) + ")");
    }
    return begin;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(slot + ": " + e.what());
  }
}

}  // namespace

Result<uint64_t> LoadState(const std::string& path, MetricStore& store, LabelBounds& bounds,
                           LauncherLedger& ledger) {
  nlohmann::json slots[2];
  Result<uint64_t> gens[2] = {ReadSlot(path, slots[0]), ReadSlot(path + ".alt", slots[1])};
  auto missing = [](const Result<uint64_t>& g) { return !g && g.error().code == ENOENT; };
  if (missing(gens[0]) && missing(gens[1])) return uint64_t{0};  // a fresh start
  // The newest readable slot; a torn or damaged one next to it is overwritten at the next save.
  int pick = -1;
  for (int i : {0, 1}) {
    if (gens[i] && (pick < 0 || *gens[i] > *gens[pick])) pick = i;
  }
  if (pick < 0) return missing(gens[0]) ? gens[1].error() : gens[0].error();
  const std::string slot = pick == 0 ? path : path + ".alt";
  const nlohmann::json& state = slots[pick];
  // nlohmann reports bad types by exception: they stop here.
  try {
    if (auto s = store.Restore(state.at("metrics")); !s) return s.error().Context(slot);
    if (auto s = bounds.Restore(state.at("labels")); !s) return s.error().Context(slot);
    for (const auto& [id, e] : state.at("launchers").items()) {
      auto& entry = ledger.entries()[id];
      entry.last_seq = e.at("seq").get<uint64_t>();
      entry.extension = e.at("extension").get<std::string>();
      entry.seen_unix = e.at("seen").get<int64_t>();
    }
  } catch (const nlohmann::json::exception& e) {
    return MakeError(slot + ": " + e.what());
  }
  return *gens[pick];
}

}  // namespace gander::exporters::collector
