#!/bin/bash
# `cmake --install` into a fresh prefix, checked file by file against install-tree.txt, then
# the installed gander used from there: it finds its collector in libexec/gander, loads the
# shipped profiles from share/gander/profiles, the systemd unit and AppArmor profile name the
# installed paths, `man` renders the pages, and the bash completion completes subcommands and
# flags.
#   tests/packaging/install_tree_test.sh BUILD_DIR SCRATCH
set -u
BUILD=$(realpath "$1")
HERE=$(dirname "$(realpath "$0")")
fails=0
ok() { echo "ok   - $1"; }
bad() {
  echo "FAIL - $1" >&2
  fails=$((fails + 1))
}
world=$(mktemp -d "$2/install-tree.XXXXXX")
trap 'rm -rf "$world"' EXIT
prefix=$world/prefix
if ! cmake --install "$BUILD" --prefix "$prefix" >"$world/install.log" 2>&1; then
  bad "cmake --install: $(tail -5 "$world/install.log")"
  exit 1
fi

# The tree, file by file (mode and path), against the committed list.
(cd "$prefix" && find . -mindepth 1 \( -type f -o -type l \) -printf '%P %m\n' | LC_ALL=C sort) >"$world/tree.txt"
if diff -u "$HERE/install-tree.txt" "$world/tree.txt" >"$world/tree.diff"; then
  ok "the install tree is exactly install-tree.txt ($(wc -l <"$world/tree.txt") files)"
else
  bad "the install tree differs from install-tree.txt:"
  cat "$world/tree.diff" >&2
fi

G=$prefix/bin/gander
export HOME=$world/home XDG_RUNTIME_DIR=$world/run XDG_CONFIG_HOME=$world/home/.config
export XDG_STATE_HOME=$world/home/.local/state
mkdir -p "$HOME" && mkdir -m 700 "$XDG_RUNTIME_DIR"
if "$G" --version | grep -q '^gander [0-9]'; then ok "installed gander runs"; else bad "installed gander --version"; fi
if "$G" collect --help 2>&1 | grep -q -- "--listen"; then
  ok "gander collect runs PREFIX/libexec/gander/gander-collect"
else
  bad "gander collect --help: $("$G" collect --help 2>&1 | head -3)"
fi
# A profile from share/gander/profiles wins over the built-in copy: prove it by editing it.
printf '\n# edited-in-share\n' >>"$prefix/share/gander/profiles/memory.yaml"
printf 'version: 1\nextends: memory\n' >"$world/p.yaml"
if "$G" policy check "$world/p.yaml" | grep -qF "$prefix/share/gander/profiles/memory.yaml"; then
  ok "profiles are loaded from PREFIX/share/gander/profiles"
else
  bad "policy check: $("$G" policy check "$world/p.yaml" 2>&1)"
fi
unit=$prefix/lib/systemd/user/gander-collector.service
if grep -qx "ExecStart=$prefix/libexec/gander/gander-collect" "$unit" &&
  ! grep -q /usr/local "$unit"; then
  ok "the systemd unit names the installed collector"
else
  bad "systemd unit: $(grep -E 'ExecStart|Documentation' "$unit")"
fi
if grep -q "^profile gander $prefix/bin/gander " "$prefix/share/gander/apparmor/gander"; then
  ok "the AppArmor profile names the installed gander"
else
  bad "apparmor profile: $(grep '^profile' "$prefix/share/gander/apparmor/gander")"
fi
for page in man1/gander.1.gz man1/gander-run.1.gz man1/gander-goose.1.gz man5/gander-policy.5.gz; do
  text=$(MANWIDTH=80 man -l "$prefix/share/man/$page" 2>"$world/man.err" | col -b)
  # groff warns of tables wider than the terminal (the policy reference has wide ones): fine.
  if [ -n "$text" ] && ! grep -v "table wider than line width\|^warning: file .<standard input>., around line" "$world/man.err" | grep -q . &&
    echo "$text" | grep -q "^NAME"; then
    ok "man renders $page"
  else
    bad "man -l $page: $(head -3 "$world/man.err")"
  fi
done
if MANWIDTH=80 man -l "$prefix/share/man/man1/gander-run.1.gz" 2>/dev/null | col -b | grep -q -- "--policy"; then
  ok "gander-run(1) lists run's options"
else
  bad "gander-run(1) lacks --policy"
fi
complete_words() {  # the bash completion's candidates for the words given (last one: partial)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gander; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$prefix/share/bash-completion/completions/gander" "$@"
}
if complete_words gander st | grep -qx status; then ok "bash completes 'gander st' to status"; else bad "bash: gander st -> $(complete_words gander st | tr '\n' ' ')"; fi
if complete_words gander run --pol | grep -qx -- --policy; then ok "bash completes 'gander run --pol' to --policy"; else bad "bash: gander run --pol -> $(complete_words gander run --pol | tr '\n' ' ')"; fi
if complete_words gander goose "" | grep -qx wrap; then ok "bash completes 'gander goose ' with wrap"; else bad "bash: gander goose -> $(complete_words gander goose "" | tr '\n' ' ')"; fi
if complete_words gander goose wrap --dr | grep -qx -- --dry-run; then ok "bash completes 'gander goose wrap --dr'"; else bad "bash: goose wrap --dr"; fi
if complete_words gander run -- node --pol | grep -q .; then bad "bash completes gander's flags after --"; else ok "nothing of gander's after --"; fi
# zsh and fish: parsed by the shells themselves (scripts/install-deps.sh installs both; a
# missing shell is a printed skip, and a failure under CI=true).
missing() {
  echo "GANDER-SKIP: install_tree_test: $1"
  if [ "${CI:-}" = true ]; then bad "$1 (CI=true: nothing may skip)"; fi
}
if command -v zsh >/dev/null; then
  if zsh -n "$prefix/share/zsh/vendor-completions/_gander" 2>"$world/zsh.err"; then ok "zsh -n: the zsh completion parses"; else bad "zsh -n: $(cat "$world/zsh.err")"; fi
else
  missing "zsh is not installed: the zsh completion is not parsed"
fi
if command -v fish >/dev/null; then
  if fish --no-execute "$prefix/share/fish/vendor_completions.d/gander.fish" 2>"$world/fish.err"; then ok "fish --no-execute: the fish completion parses"; else bad "fish --no-execute: $(cat "$world/fish.err")"; fi
else
  missing "fish is not installed: the fish completion is not parsed"
fi

# The AppArmor profile, parsed by apparmor_parser (-Q: no kernel load, -K: no cache). A parser
# of AppArmor 4 parses it as installed. Debian 12's (3.0.8) ships no abi/4.0 and does not know
# the `userns` rule (a syntax error): there it is parsed with a stub abi/4.0 in an include
# directory of ours and the `userns,` line taken out, and the check asserts that this line is
# the only one taken out, so everything else in the profile is parsed.
profile=$prefix/share/gander/apparmor/gander
if command -v apparmor_parser >/dev/null; then
  if apparmor_parser -Q -K "$profile" >"$world/aa.out" 2>&1; then
    ok "apparmor_parser -Q -K parses the profile as installed"
  elif grep -q "abi/4.0\|TOK_MODE\|userns" "$world/aa.out"; then
    mkdir -p "$world/aa/abi" && : >"$world/aa/abi/4.0"
    grep -v '^  userns,$' "$profile" >"$world/aa/gander"
    if [ "$(diff "$profile" "$world/aa/gander" | grep -c '^<')" = 1 ] &&
      apparmor_parser -Q -K -I "$world/aa" "$world/aa/gander" >"$world/aa3.out" 2>&1; then
      ok "apparmor_parser $(apparmor_parser --version | head -1 | awk '{print $NF}') parses the profile but its one userns rule (unknown before AppArmor 4)"
    else
      bad "apparmor_parser (with a stub abi/4.0, userns out): $(cat "$world/aa3.out" "$world/aa.out")"
    fi
  else
    bad "apparmor_parser -Q -K: $(cat "$world/aa.out")"
  fi
else
  missing "apparmor_parser is not installed (apt-get install apparmor): the profile is not parsed"
fi

[ $fails = 0 ] && echo "install_tree_test: all passed" || echo "install_tree_test: $fails failed" >&2
exit $((fails > 0))
