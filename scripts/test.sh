#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test
# (unit, integration, benchmark smoke runs), then runs the unit tests again
# in an AddressSanitizer + UndefinedBehaviorSanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
jobs="$(nproc)"

echo "== build"
scripts/build.sh release
echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

echo "== ASan+UBSan build (unit tests)"
scripts/build.sh asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 \
  --label-exclude integration
