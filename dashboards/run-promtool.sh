#!/bin/sh
# Runs promtool for ctest, or skips (exit 77, ctest's SKIP_RETURN_CODE) saying why.
#   run-promtool.sh ARGS...              promtool ARGS...
#   run-promtool.sh --stdin FILE ARGS... promtool ARGS... < FILE   (check metrics reads stdin)
if ! command -v promtool >/dev/null 2>&1; then
  echo "dashboards: SKIP: promtool not found (Debian: apt-get install prometheus)"
  exit 77
fi
if [ "$1" = "--stdin" ]; then
  input=$2
  shift 2
  exec promtool "$@" <"$input"
fi
exec promtool "$@"
