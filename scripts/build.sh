#!/usr/bin/env bash
# Configures and builds Lockstep into BUILD_DIR (default: build).
# Extra arguments go to CMake, e.g. -DLOCKSTEP_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C "$build_dir"
