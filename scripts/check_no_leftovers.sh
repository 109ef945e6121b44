#!/usr/bin/env bash
# Usage: scripts/check_no_leftovers.sh COMMAND [ARGS...]
# Runs COMMAND (the test suite: scripts/test.sh runs `ctest --preset ci`
# through it) with TMPDIR and TEST_TMPDIR (GoogleTest's testing::TempDir()
# reads it first) pointing at a fresh empty directory, and fails, naming
# them, if anything is left there: every test removes what it creates (C++
# tests in a ScopedTempDir, src/common/temp_dir_for_test.h; Python tests in
# tmp_path). The directory is removed either way. Exits with COMMAND's status,
# or 1 when it passed but left files.
set -uo pipefail
dir=$(mktemp -d "${TMPDIR:-/tmp}/perseus-tests.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir TEST_TMPDIR=$dir "$@"
status=$?
leftovers=$(find "$dir" -mindepth 1 -maxdepth 1 -printf '  %P\n' | sort)
if [ -n "$leftovers" ]; then
  echo "perseus: the tests left $(wc -l <<<"$leftovers") file(s) in their temporary directory (TMPDIR):" >&2
  echo "$leftovers" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
