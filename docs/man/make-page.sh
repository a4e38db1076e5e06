#!/bin/sh
# Builds one man page (docs/CMakeLists.txt):
#   make-page.sh policy HEAD.md POLICIES_README OUT        gander-policy(5): HEAD + the format's reference
#   make-page.sh command GANDER CMD WHAT VERSION INCLUDE OUT  gander-CMD(1) from `gander CMD --help`
set -eu
case $1 in
policy)
  tail -n +2 "$3" | cat "$2" - | go-md2man -out "$4"
  ;;
command)
  gander=$2 cmd=$3 what=$4 version=$5 include=$6 out=$7
  # help2man names the page after the program it runs: a two-line gander-CMD wrapper.
  dir=$(dirname "$out")/bin
  mkdir -p "$dir"
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$gander" "$cmd" >"$dir/gander-$cmd"
  chmod +x "$dir/gander-$cmd"
  help2man --no-info --no-discard-stderr --section=1 --version-string="gander-$cmd $version" \
    --name="$what" --source="gander $version" --manual="gander manual" --include="$include" \
    --output="$out" "$dir/gander-$cmd"
  ;;
esac
