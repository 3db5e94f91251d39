#!/usr/bin/env bash
# scripts/check-parts.sh over build folders made up here: it passes a
# folder that builds every part, and fails one whose tests, Python module
# or CUDA backend (with the toolkit installed) were configured away, or one
# never configured, naming what is missing.
# Usage: check_parts_test.sh PATH/TO/check-parts.sh
set -euo pipefail
check="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

parts() {  # DIR tests python_module python_tests cuda_backend cuda_toolkit
  mkdir -p "$1"
  printf 'tests=%s\npython_module=%s\npython_tests=%s\ncuda_backend=%s\ncuda_toolkit=%s\n' \
    "$2" "$3" "$4" "$5" "$6" >"$1/lockstep-parts.txt"
}
expect_ok() {
  "$check" "$1" >/dev/null 2>"$tmp/err" || fail "$1 refused: $(cat "$tmp/err")"
}
expect_refused() {  # DIR TEXT
  if "$check" "$1" >/dev/null 2>"$tmp/err"; then fail "$1 passed"; fi
  grep -qF "$2" "$tmp/err" || fail "$1: no '$2' in: $(cat "$tmp/err")"
}

parts "$tmp/all" ON ON ON ON ON
expect_ok "$tmp/all"
parts "$tmp/no-toolkit" ON ON ON OFF OFF
expect_ok "$tmp/no-toolkit"
parts "$tmp/demo" OFF OFF OFF OFF ON
expect_refused "$tmp/demo" "the test suites"
expect_refused "$tmp/demo" "the Python module"
expect_refused "$tmp/demo" "the CUDA backend"
parts "$tmp/no-torch" ON ON OFF ON ON
expect_refused "$tmp/no-torch" "the Python tests"
mkdir -p "$tmp/empty"
expect_refused "$tmp/empty" "lockstep-parts.txt is missing"
echo "check-parts: 5 cases as expected"
