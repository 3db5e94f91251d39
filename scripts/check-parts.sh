#!/usr/bin/env bash
# Fails, naming each one, when a part the test run must cover was
# configured away in build folder DIR (default build/): the test suites,
# the Python module and its tests, and the CUDA backend where the toolkit
# is installed. A build configured by the demo preset, or with -D...=OFF,
# would otherwise let the suite pass on what is left. Reads
# DIR/lockstep-parts.txt, which CMake writes at configure time.
# Usage: scripts/check-parts.sh [DIR]
set -euo pipefail
dir="${1:-build}"
parts="$dir/lockstep-parts.txt"
if [ ! -f "$parts" ]; then
  echo "check-parts: $parts is missing: $dir was not configured by this tree's CMakeLists.txt" >&2
  exit 1
fi
value() { sed -n "s/^$1=//p" "$parts"; }
missing=()
[ "$(value tests)" = ON ] ||
  missing+=("the test suites (LOCKSTEP_BUILD_TESTS is $(value tests))")
[ "$(value python_module)" = ON ] ||
  missing+=("the Python module (LOCKSTEP_WITH_PYTHON=OFF, or pybind11-dev or python3-dev missing)")
if [ "$(value tests)" = ON ] && [ "$(value python_module)" = ON ] &&
  [ "$(value python_tests)" != ON ]; then
  missing+=("the Python tests (they need python3-numpy, python3-torch and python3-pytest)")
fi
if [ "$(value cuda_toolkit)" = ON ] && [ "$(value cuda_backend)" != ON ]; then
  missing+=("the CUDA backend (the toolkit is installed; LOCKSTEP_WITH_CUDA=ON builds it)")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "check-parts: $dir does not build:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "check-parts: $dir builds the tests, the Python module and its tests$([ "$(value cuda_backend)" = ON ] && echo ', the CUDA backend')"
