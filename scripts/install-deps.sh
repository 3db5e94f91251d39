#!/usr/bin/env bash
# Installs the Debian 12 packages Lockstep needs: `demo` for building and
# running a job, `test` (the default) adds the test, benchmark and lint
# tools, `fuzz` clang and libFuzzer (scripts/fuzz.sh). Skips apt entirely when everything is already installed.
set -euo pipefail
profile="${1:-test}"
packages=(
  build-essential cmake ninja-build pkg-config
  libzmq3-dev cppzmq-dev flatbuffers-compiler libflatbuffers-dev
  libboost-program-options-dev libopenblas-dev zlib1g-dev librocksdb-dev
  nlohmann-json3-dev libtomlplusplus-dev libssl-dev
  dataset-fashion-mnist
)
case "$profile" in
  demo) ;;
  # python3-matplotlib: the experiment report's plots (its test draws them);
  # pybind11, Python's headers, NumPy, PyTorch and pytest: the Python module
  # and its tests; slurm-wlm and munge: the single-node Slurm cluster the
  # deploy tests start; prometheus: its promtool checks the metrics page.
  test) packages+=(libgtest-dev libgmock-dev libbenchmark-dev clang-format
                   clang-tidy python3-matplotlib pybind11-dev python3-dev
                   python3-numpy python3-torch python3-pytest slurm-wlm
                   munge prometheus) ;;
  # libclang-rt-14-dev: libFuzzer and clang's sanitizer runtimes.
  fuzz) packages+=(clang libclang-rt-14-dev libgtest-dev libgmock-dev) ;;
  *) echo "usage: $0 [demo|test|fuzz]" >&2; exit 2 ;;
esac
# The manifest tests render with kubectl's kustomize (>= v4: kubectl 1.21)
# and validate with npm's kubernetes-models (tests/deploy/k8s/package.json,
# versions pinned by its lock file).
if [ "$profile" = test ]; then
  command -v kubectl >/dev/null || packages+=(kubernetes-client)
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
npm_modules() {
  local dir
  dir="$(dirname "$0")/../tests/deploy/k8s"
  if [ "$profile" = test ] && [ ! -d "$dir/node_modules" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  npm_modules
  exit 0
fi
# apt and dpkg print a line per package and step: they go to a log, and
# the terminal gets one line (and the log's end if the install fails).
log="$(mktemp "${TMPDIR:-/tmp}/lockstep-install-deps.XXXXXX.log")"
echo "installing ${#missing[@]} Debian packages (a few minutes; log: $log): ${missing[*]}"
quietly() {
  if ! "$@" >>"$log" 2>&1; then
    echo "install-deps.sh: failed: $*; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
quietly $SUDO apt-get update -qq
# PyTorch alone without its recommendations (libtorch-dev and a compiler
# toolchain: hundreds of megabytes the tests never use), and Prometheus
# (only promtool is used; its recommended node exporter is a daemon).
lean=()
rest=()
for p in "${missing[@]}"; do
  case "$p" in
    python3-torch|prometheus) lean+=("$p") ;;
    *) rest+=("$p") ;;
  esac
done
if [ ${#rest[@]} -gt 0 ]; then
  quietly $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    "${rest[@]}"
fi
if [ ${#lean[@]} -gt 0 ]; then
  quietly $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${lean[@]}"
fi
echo "installed; the log is $log"
npm_modules
