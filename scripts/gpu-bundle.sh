#!/usr/bin/env bash
# Packs what the GPU checks (scripts/gpu-checks.sh) run into one archive for
# a GPU machine that has the NVIDIA driver and the CUDA libraries but none of
# Lockstep's build dependencies: the release binaries (stripped), the shared
# libraries they load that are not part of glibc or CUDA, the checks script,
# the experiment spec and Fashion-MNIST. Build first (scripts/build.sh
# release, with the CUDA toolkit found).
# Usage: scripts/gpu-bundle.sh OUT.tar.xz
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:?usage: $0 OUT.tar.xz}")"
bins=(lockstep-launch lockstep-coordinator lockstep-server lockstep-worker lockstep-keys
      lockstep-experiment lockstep-bench-compute compute_gpu_tests)
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/data" "$stage/experiments"
for b in "${bins[@]}"; do
  [ -x "build/bin/$b" ] || { echo "missing build/bin/$b: build first" >&2; exit 1; }
  strip -o "$stage/bin/$b" "build/bin/$b"
done
# glibc's own libraries and the CUDA ones come from the target machine.
for b in "${bins[@]}"; do ldd "build/bin/$b"; done | awk '$3 ~ /^\// {print $3}' |
  sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv)\.so|/ld-linux|libcu(blas|blasLt|dart)' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp /usr/share/datasets/fashion-mnist/*.gz "$stage/data/"
cp experiments/07-mixed-devices.toml "$stage/experiments/"
cp scripts/gpu-checks.sh "$stage/"
tar -C "$stage" -cJf "$out" .
echo "$out: $(du -h "$out" | cut -f1)"
