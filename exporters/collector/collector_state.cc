// The collector's state file (see collector_state.h).
#include "exporters/collector/collector_state.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

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

namespace {

// A 64-bit checksum of a save's text before its checksum, FNV-1a's multiply over 8-byte words
// (a byte at a time would be a multiply per byte of a state that reaches 100 KB): a slot holding
// blocks of two saves (a retry torn by a crash, or what a power cut leaves without fsync) does not
// match it. Not a defence against a forger: the state directory is the user's alone.
uint64_t Checksum(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325 ^ text.size();
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    memcpy(&word, text.data() + i, sizeof word);
    h = (h ^ word) * 0x100000001b3;
    h ^= h >> 32;
  }
  for (; i < text.size(); ++i) h = (h ^ static_cast<unsigned char>(text[i])) * 0x100000001b3;
  return h;
}

// The checksum as the file writes it: 16 hex digits.
std::string ChecksumText(std::string_view text) {
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Checksum(text)));
  return hex;
}

constexpr std::string_view kChecksumKey = ",\"checksum\":\"";

// Opens a slot that must be a regular file: not a symlink (O_NOFOLLOW), not a FIFO (it
// would block the collector) nor anything else a hand placed there.
Result<UniqueFd> OpenSlot(const std::string& slot, int flags) {
  UniqueFd fd(open(slot.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600));
  if (!fd) return ErrnoError("open " + slot);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat " + slot);
  if (!S_ISREG(st.st_mode)) return Error{EINVAL, slot + ": not a regular file"};
  return fd;
}

}  // namespace

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
  text += "},\"generation_end\":" + gen;
  text += std::string(kChecksumKey) + ChecksumText(text) + "\"}\n";

  // Overwritten in place, not truncated first and not renamed over: on ext4 either makes the
  // kernel flush the file at once and (rename) free the old inode's blocks, which cost every
  // launcher's exit a third of a millisecond on a two-core machine (docs/collector.md).
  const std::string slot = StateSlot(path, generation);
  auto opened = OpenSlot(slot, O_WRONLY | O_CREAT);
  struct stat st {};
  if (!opened && lstat(slot.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Something other than our file at the slot, a symlink or a FIFO (ELOOP, ENXIO; the
    // directory is private: the user's own doing): replaced, as the rename replaced it.
    unlink(slot.c_str());
    opened = OpenSlot(slot, O_WRONLY | O_CREAT | O_EXCL);
  }
  if (!opened) return std::move(opened).error();
  UniqueFd fd = std::move(opened).value();
  if (fchmod(fd.get(), 0600) != 0) return ErrnoError("chmod " + slot);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = pwrite(fd.get(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError("write " + slot);
    done += static_cast<size_t>(n);
  }
  // Cut to length only when the older text was longer (a truncation costs an inode update).
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat " + slot);
  if (st.st_size > static_cast<off_t>(text.size()) &&
      ftruncate(fd.get(), static_cast<off_t>(text.size())) != 0) {
    return ErrnoError("truncate " + slot);
  }
  if (close(fd.Release()) != 0) return ErrnoError("close " + slot);
  return {};
}

namespace {

struct Slot {
  std::string path;
  Result<uint64_t> generation = Error{ENOENT, ""};
  bool legacy = false;  // written before the two slots: no generation, no checksum
  int64_t mtime_ns = 0;
  nlohmann::json state;
};

// A slot's generation, or an error when it is unreadable, torn, mixed or of another version.
Slot ReadSlot(const std::string& path) {
  Slot slot;
  slot.path = path;
  auto opened = OpenSlot(path, O_RDONLY);
  if (!opened) {
    slot.generation = std::move(opened).error();
    return slot;
  }
  UniqueFd fd = std::move(opened).value();
  struct stat st {};
  fstat(fd.get(), &st);
  slot.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      slot.generation = ErrnoError("read " + path);
      return slot;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  auto bad = [&](const std::string& why) {
    slot.generation = MakeError(path + ": " + why);
    return std::move(slot);
  };
  // The checksum covers every byte before its key: found from the end, it is the last key.
  const size_t key = text.rfind(kChecksumKey);
  const bool has_sum = key != std::string::npos;
  if (has_sum) {
    const std::string want = ChecksumText(std::string_view(text).substr(0, key));
    if (text.compare(key + kChecksumKey.size(), want.size(), want) != 0) {
      return bad("checksum mismatch (a save torn by a crash or a power cut)");
    }
  }
  slot.state = nlohmann::json::parse(text, nullptr, false);
  if (slot.state.is_discarded() || !slot.state.is_object()) return bad("not JSON");
  const auto& s = slot.state;
  auto version = s.find("version");
  if (version == s.end() || *version != kStateVersion) return bad("unknown version");
  auto begin = s.find("generation"), end = s.find("generation_end");
  slot.legacy = begin == s.end() && end == s.end() && !has_sum;
  if (slot.legacy) {
    slot.generation = uint64_t{0};
    return slot;
  }
  if (!has_sum || begin == s.end() || end == s.end() || !begin->is_number_unsigned() ||
      *begin != *end) {
    return bad("incomplete save");
  }
  slot.generation = begin->get<uint64_t>();
  return slot;
}

Status Restore(const Slot& slot, MetricStore& store, LabelBounds& bounds, LauncherLedger& ledger) {
  // nlohmann reports bad types by exception: they stop here.
  try {
    const nlohmann::json& state = slot.state;
    if (auto s = store.Restore(state.at("metrics")); !s) return s.error().Context(slot.path);
    if (auto s = bounds.Restore(state.at("labels")); !s) return s.error().Context(slot.path);
    for (const auto& [id, e] : state.at("launchers").items()) {
      auto& entry = ledger.entries()[id];
      entry.last_seq = e.at("seq").get<uint64_t>();
      entry.extension = e.at("extension").get<std::string>();
      entry.seen_unix = e.at("seen").get<int64_t>();
    }
  } catch (const nlohmann::json::exception& e) {
    return MakeError(slot.path + ": " + e.what());
  }
  return {};
}

}  // namespace

Result<uint64_t> LoadState(const std::string& path, MetricStore& store, LabelBounds& bounds,
                           LauncherLedger& ledger) {
  Slot slots[2] = {ReadSlot(path), ReadSlot(path + ".alt")};
  auto missing = [](const Slot& s) { return !s.generation && s.generation.error().code == ENOENT; };
  if (missing(slots[0]) && missing(slots[1])) return uint64_t{0};  // a fresh start
  // The newest readable slot first. A file of before the two slots next to an `.alt` (an
  // upgrade, a downgrade that wrote only the file, an upgrade again): the later written wins.
  auto newer = [](const Slot& a, const Slot& b) {
    if (a.legacy || b.legacy) return a.mtime_ns > b.mtime_ns;
    return *a.generation > *b.generation;
  };
  std::vector<const Slot*> order;
  for (const Slot& s : slots) {
    if (s.generation) order.push_back(&s);
  }
  if (order.size() == 2 && newer(*order[1], *order[0])) std::swap(order[0], order[1]);
  // One that does not restore (a type error) leaves the other to try, into fresh objects.
  std::optional<Error> first_error;
  for (const Slot* s : order) {
    MetricStore trial_store;
    LabelBounds trial_bounds(bounds.limits());
    LauncherLedger trial_ledger;
    if (auto restored = Restore(*s, trial_store, trial_bounds, trial_ledger); !restored) {
      if (!first_error) first_error = restored.error();
      continue;
    }
    if (auto restored = Restore(*s, store, bounds, ledger); !restored) return restored.error();
    // The next save must not reuse the number of a slot that reads as whole.
    uint64_t generation = *s->generation;
    for (const Slot& other : slots) {
      if (other.generation) generation = std::max(generation, *other.generation);
    }
    return generation;
  }
  if (first_error) return *first_error;
  return missing(slots[0]) ? slots[1].generation.error() : slots[0].generation.error();
}

}  // namespace gander::exporters::collector
