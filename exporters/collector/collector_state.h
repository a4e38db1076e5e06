// What survives a collector restart: every series value, the admitted label values, and per
// launcher the last sequence number applied (the ledger), in one JSON file replaced
// atomically (write a temporary file, then rename over the old one), so that a crash leaves
// either the old state or the new one.
//
// The collector acknowledges a launcher's records only after the state that includes them is
// on disk; so after a crash (even SIGKILL) every record is either in the restored state, or
// unacknowledged and sent again: never lost, never counted twice. (rename without fsync: a
// process crash is covered, a power cut may lose the last interval.)
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

// Writes the state to `path` atomically (path.tmp, then rename), mode 0600.
Status SaveState(const std::string& path, const MetricStore& store, const LabelBounds& bounds,
                 const LauncherLedger& ledger);
// Reads it back into empty objects. A missing file is a fresh start (ok); a damaged one is
// an error (the caller decides: the collector moves it aside and starts fresh, loudly).
Status LoadState(const std::string& path, MetricStore& store, LabelBounds& bounds,
                 LauncherLedger& ledger);

}  // namespace gander::exporters::collector
