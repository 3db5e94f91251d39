#!/usr/bin/env bash
# Configures and builds one preset of CMakePresets.json (default: release,
# into build/): release, demo (the roles and the launcher only), asan or
# tsan. Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
cmake --preset "$preset" "$@" >/dev/null
cmake --build --preset "$preset"
