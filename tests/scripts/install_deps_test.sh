#!/usr/bin/env bash
# scripts/install-deps.sh on a machine that lacks packages, with apt-get
# and dpkg-query played by stubs on the PATH: the terminal gets a line or
# two, not apt's and dpkg's line per package (they go to a log); a failed
# install stops with the log's end on stderr.
#   install_deps_test.sh SCRIPT
set -uo pipefail
script="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat > "$work/bin/dpkg-query" <<'STUB'
#!/bin/sh
echo "unknown ok not-installed"
STUB
cat > "$work/bin/apt-get" <<'STUB'
#!/bin/sh
for i in $(seq 1 200); do echo "Selecting previously unselected package p$i."; done
[ -z "${APT_FAILS:-}" ] || { echo "E: Unable to locate package nothing"; exit 100; }
STUB
cat > "$work/bin/id" <<'STUB'
#!/bin/sh
echo 0
STUB
chmod +x "$work/bin/"*
fail() { echo "FAIL: $*" >&2; exit 1; }

out="$(PATH="$work/bin:$PATH" TMPDIR="$work" "$script" demo 2>&1)" ||
  fail "the install failed: $out"
lines="$(printf '%s\n' "$out" | wc -l)"
[ "$lines" -le 3 ] || fail "$lines lines on the terminal:
$out"
log="$(ls "$work"/lockstep-install-deps.*.log)" || fail "no log in $work"
grep -q "Selecting previously unselected package p200" "$log" ||
  fail "apt's lines are not in the log $log"
printf '%s\n' "$out" | grep -q "log: $log" || fail "the log is not named: $out"

out="$(PATH="$work/bin:$PATH" TMPDIR="$work" APT_FAILS=1 "$script" demo 2>&1)" &&
  fail "a failed install exited 0: $out"
printf '%s\n' "$out" | grep -q "E: Unable to locate package" ||
  fail "a failed install does not show the log's end: $out"
echo "PASS: $lines lines on the terminal; the rest in the log"
