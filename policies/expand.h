// Expansion: turns a merged Policy (variables, `~`) into an ExpandedPolicy whose paths are
// absolute and lexically normalised, ready for the launcher to compile. Pure: reads no
// environment and touches no filesystem; everything it substitutes comes from the context.
//
// Variables, in paths and env.set values:
//   ${WORKSPACE}  ctx.workspace
//   ${HOME}       ctx.home
//   ${DATA}       ctx.data (the extension's persistent data directory)
//   ${NAME}       ctx.environ["NAME"]; NAME matches [A-Za-z_][A-Za-z0-9_]*
//   $$            a literal $ (any other lone $ is an error)
// A variable that is undefined or empty is an error, so "${UNSET}/" can never become "/".
// Substituted values are inserted verbatim (not expanded again).
// In paths only, a leading "~" or "~/" stands for ctx.home ("~user" is not supported).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "policies/policy.h"

namespace gander::policies {

// Checks the ${...}/$$ syntax of `text` without substituting anything (the parser uses this so
// that a malformed reference is reported with its position before anything is expanded).
Status CheckVariableSyntax(std::string_view text);

// Substitutes ${NAME} and $$ in `text` (no `~` handling).
Result<std::string> ExpandVariables(std::string_view text, const ExpansionContext& ctx);

// Lexical normalisation of an absolute path: collapses "//", drops "." and resolves ".."
// (never above "/"), strips a trailing "/". Does not touch the filesystem.
std::string NormalizePath(std::string_view absolute_path);

// Expands every path (filesystem lists and monitor.audit_log) and env.set value of `merged`
// (which must have no `extends` left: see ResolveExtends in loader.h), copies limits, network,
// env.pass and the source chain, and fills in the monitor defaults (files: opens, a 16MiB
// audit log rotation size, 4 rotated files) for what the policy leaves unset.
// Duplicate paths within a list (after normalisation) are kept once. Errors name the entry's
// "file:line:col" and what went wrong, e.g.
//   "my.yaml:7:5: filesystem.read: undefined variable ${NODE_PREFIX} in '${NODE_PREFIX}/lib'".
Result<ExpandedPolicy> Expand(const Policy& merged, const ExpansionContext& ctx);

}  // namespace gander::policies
