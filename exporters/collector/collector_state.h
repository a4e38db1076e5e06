// What survives a collector restart: every series value, the admitted label values, and per
// launcher the last sequence number applied (the ledger), in JSON, written alternately to two
// slots (`path` and `path.alt`) and overwritten in place. Each save carries its generation
// at its start and again at its end, and a 64-bit checksum of everything before it. The
// reader takes the newest slot that is whole, so a save torn by a crash leaves the one
// before it. A save that fails is retried under a new number (+2: the same slot), so two
// texts of one number never mix.
//
// The collector acknowledges a launcher's records only after the state that includes them is
// written; so after a crash (even SIGKILL) every record is either in the restored state, or
// unacknowledged and sent again: never lost, never counted twice. (No fsync: a process crash
// is covered; after a power cut a slot holding blocks of two saves fails its checksum, and
// when both do the collector starts from zero.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "exporters/collector/label_bounds.h"
#include "exporters/collector/metric_store.h"

namespace gander::exporters::collector {

class LauncherLedger {
 public:
  struct Entry {
    uint64_t last_seq = 0;  // 0: nothing applied yet
    std::string extension;
    int64_t seen_unix = 0;  // last hello or record, for pruning
  };
  enum class Check { kApply, kDuplicate, kGap };

  // kApply for the next number (or any first number of a launcher with nothing applied, as
  // after a lost state file), kDuplicate for one already applied (a resend), kGap otherwise
  // (records cannot go missing on a stream: the launcher is broken).
  Check Classify(const std::string& launcher, uint64_t seq) const;
  void Applied(const std::string& launcher, uint64_t seq);
  Entry& Touch(const std::string& launcher, std::string_view extension, int64_t now_unix);
  uint64_t LastSeq(const std::string& launcher) const;
  void Forget(const std::string& launcher) { entries_.erase(launcher); }
  // Drops launchers not seen for `max_age_s` (they died with a backlog that will never come).
  void Prune(int64_t now_unix, int64_t max_age_s);
  const std::unordered_map<std::string, Entry>& entries() const { return entries_; }
  std::unordered_map<std::string, Entry>& entries() { return entries_; }

 private:
  std::unordered_map<std::string, Entry> entries_;
};

// The file generation `generation` is written to: `path` for even ones, `path.alt` for odd.
std::string StateSlot(const std::string& path, uint64_t generation);
// Writes the state as `generation` (the last loaded or saved one + 1) to its slot, mode 0600.
Status SaveState(const std::string& path, uint64_t generation, const MetricStore& store,
                 const LabelBounds& bounds, const LauncherLedger& ledger);
// Reads the newest whole slot back into empty objects; returns its generation. No slot at
// all is a fresh start (generation 0); none readable is an error (the caller decides: the
// collector moves them aside and starts fresh, loudly). A file of before the two slots reads
// as generation 0.
Result<uint64_t> LoadState(const std::string& path, MetricStore& store, LabelBounds& bounds,
                           LauncherLedger& ledger);

}  // namespace gander::exporters::collector
