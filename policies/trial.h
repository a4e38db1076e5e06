// `--mode monitor`: trial a tighter policy on a live extension without breaking it.
//
// The sandbox enforces the base (the `default` profile) plus whatever the trial policy grants
// beyond it; the restrictions the trial policy adds beyond the base are not applied. The
// monitor classifies every access with the trial policy itself and records what it would have
// refused as `would_deny`. Pure: no filesystem, no kernel.
#pragma once

#include "policies/policy.h"

namespace gander::policies {

// What `--mode monitor` enforces for `trial`:
//   - filesystem read, exec, write and private: both policies' entries (trial first);
//   - filesystem deny: the base's only (the trial's extra denies are what is being trialled);
//   - network allow: both policies' rules; network deny: the base's only; deny_errno: the
//     trial's;
//   - limits: a limit only where the base sets one, the looser of the two values;
//   - env, monitor settings and the audit log: the trial's (they grant or observe);
//   - sources: the trial's chain, then "monitor mode: enforcing " and the base's chain.
// Policy v1 has no syscall rules beyond gander's fixed floor, which both share.
ExpandedPolicy TrialEnforcement(const ExpandedPolicy& trial, const ExpandedPolicy& base);

}  // namespace gander::policies
