#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test
# (unit, integration, the Python module's, benchmark smoke runs), the static
# checks, the unit tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer, and the suites whose threads share state under
# ThreadSanitizer, one phase after another (each prints when it starts).
# The static checks do not run beside the tests, though half of 2 cores
# idles while the multi-process tests wait on each other: at idle priority
# beside them they cost the tests 105 s (530 s against 425 s) and failed
# deploy.slurm_requeue once (a task did not log the job's preemption).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
jobs="$(nproc)"

echo "== build (at ${SECONDS} s)"
scripts/build.sh release
scripts/check-parts.sh build
/usr/bin/python3 scripts/check-doc-links.py
/usr/bin/python3 scripts/check-doc-names.py
/usr/bin/python3 scripts/check-layers.py
echo "== tests (at ${SECONDS} s)"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600 --no-tests=error

echo "== lint (at ${SECONDS} s)"
scripts/lint.sh

# Whole in-process jobs (cluster) run under TSan below, not here; the
# docs' commands (docs), whole jobs of real processes with Python workers
# (which cannot load an ASan module), run in the release pass only. The
# sanitizer presets run each test binary as 3 GoogleTest shards and leave
# out the 2 GiB frame test, which only copies memory (26 s under ASan, minutes
# under TSan); the release run has it.
echo "== ASan+UBSan build (unit tests) (at ${SECONDS} s)"
scripts/build.sh asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 \
  --label-exclude '^(integration|cluster|deploy|docs)$'

# The suites with threads that share state: the transports (I/O threads,
# the in-process mailbox), the shard (background apply), the worker
# (heartbeat thread), the coordinator and whole in-process jobs. The 2 GiB
# frame test only copies memory, which TSan makes take minutes.
echo "== TSan build (threaded suites) (at ${SECONDS} s)"
scripts/build.sh tsan
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" --timeout 900 \
  --label-regex '^(transport|server|worker|coordinator|cluster)$'
echo "== done in ${SECONDS} s"
