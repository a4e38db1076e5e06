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

// What `--mode learn` enforces while it records `learned` (the policy given, on trial as in
// monitor mode): the host's files, widened in this one place.
//   - read and exec: `learned`'s entries plus every directory of `host_roots` (the entries of
//     `/` but the kernel's and runtime ones, which the caller leaves out: /proc, /dev, /sys,
//     /run);
//   - write: `learned`'s entries plus `writable` (exec too), which are no longer private: the
//     host's /tmp and the real home (the user's own files are visible and writable); the
//     caller leaves the home out for HOME=/ and the like, so it stays private;
//   - deny: `learned`'s deny list (credentials: a suggestion never grants them anyway) plus
//     `keep_denied` (gander's own policies and audit logs, so learning cannot rewrite them);
//   - network: unchanged here; the egress broker allows every destination in learn mode.
// Limits, env, secrets and monitor settings stay `learned`'s.
ExpandedPolicy LearnEnforcement(const ExpandedPolicy& learned,
                                const std::vector<std::string>& host_roots,
                                const std::vector<std::string>& writable,
                                const std::vector<std::string>& keep_denied);

}  // namespace gander::policies
