#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test
# (unit, integration, the Python module's, benchmark smoke runs), the static
# checks, the unit tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer, and the suites whose threads share state under
# ThreadSanitizer. Its phases print when they start.
#
# The multi-process tests spend most of their time waiting on each other
# (half of 2 cores stays idle while they run), so clang-tidy, which needs
# only CPU, runs beside them at idle priority (SCHED_IDLE and the idle I/O
# class: it gets only what the tests leave); its output is printed when it
# is waited for. A test that assumes a role reached a state without
# waiting for it fails under that load (HalfOpenTest did): such a test is
# wrong, not the load. The sanitizer builds do not run beside tests: their
# gigabytes of writes stall the tests' fsyncs past a heartbeat deadline (a
# Python worker's job saw its workers declared dead).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
jobs="$(nproc)"
logs="$(mktemp -d /tmp/lockstep-test.XXXXXX)"
side=""
# Runs "$1" (a shell command) at idle priority in a process group of its
# own, in the background: $side is its pid and group.
beside() {
  setsid ionice -c 3 chrt --idle 0 bash -c "$1" &
  side=$!
}
# Waits for the side job; prints each of its logs (the whole log when the
# job failed, else its last lines) and fails when it did.
await_side() {
  local rc=0
  wait "$side" || rc=$?
  side=""
  for log in "$@"; do
    echo "-- $log"
    if [ ! -f "$logs/$log" ]; then
      echo "(not started: a step before it failed)"
    elif [ "$rc" -eq 0 ]; then
      tail -n 3 "$logs/$log"
    else
      cat "$logs/$log"
    fi
  done
  return "$rc"
}
# A failing step ends the script: its side job goes with it (its logs were
# printed, or it did not get to end).
trap '[ -z "$side" ] || kill -- "-$side" 2>/dev/null || true; rm -rf "$logs"' EXIT

echo "== build (at ${SECONDS} s)"
scripts/build.sh release
scripts/check-parts.sh build
/usr/bin/python3 scripts/check-doc-links.py
/usr/bin/python3 scripts/check-doc-names.py
/usr/bin/python3 scripts/check-layers.py
echo "== tests, beside them lint (at ${SECONDS} s)"
beside "scripts/lint.sh >$logs/lint.log 2>&1"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600 --no-tests=error

echo "== lint (at ${SECONDS} s)"
await_side lint.log

# Whole in-process jobs (cluster) run under TSan below, not here; the
# docs' commands (docs), whole jobs of real processes with Python workers
# (which cannot load an ASan module), run in the release pass only. The
# sanitizer presets run each test binary as 3 GoogleTest shards and leave
# out the 2 GiB frame test, which only copies memory (26 s under ASan, minutes
# under TSan); the release run has it.
echo "== ASan+UBSan build and unit tests (at ${SECONDS} s)"
scripts/build.sh asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 \
  --label-exclude '^(integration|cluster|deploy|docs)$'

# The suites with threads that share state: the transports (I/O threads,
# the in-process mailbox), the shard (background apply), the worker
# (heartbeat thread), the coordinator and whole in-process jobs. The 2 GiB
# frame test only copies memory, which TSan makes take minutes.
echo "== TSan build and the threaded suites (at ${SECONDS} s)"
scripts/build.sh tsan
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" --timeout 900 \
  --label-regex '^(transport|server|worker|coordinator|cluster)$'
echo "== done in ${SECONDS} s"
