#!/usr/bin/env bash
# The checks that need a CUDA device, run from an unpacked
# scripts/gpu-bundle.sh archive on a GPU machine: the gpu-labelled tests
# (what `ctest -L gpu` runs), lockstep-bench-compute on the GPU and on one
# CPU core, the 2-conv net trained by four GPU workers under BSP (the CPU
# run's settings, docs/performance.md), and spec 7 (one GPU worker and three CPU
# workers, BSP against LB-BSP). Each step's output goes to OUTDIR; a
# failing step does not stop the next. Steps: any of
# tests,bench,accuracy,mixed (default: all).
# Usage: ./gpu-checks.sh OUTDIR [STEPS]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:?usage: $0 OUTDIR [tests,bench,accuracy,mixed]}")"
steps="${2:-tests,bench,accuracy,mixed}"
mkdir -p "$out"
cd "$here"
# CUDA's libraries: the toolkit's, else those of a Python wheel.
cuda_libs="/usr/local/cuda/lib64"
[ -e "$cuda_libs/libcublas.so.13" ] ||
  cuda_libs="$(dirname "$(find / -name 'libcublas.so.13' -not -path '*/proc/*' 2>/dev/null | head -1)")"
export LD_LIBRARY_PATH="$here/lib:$cuda_libs:${LD_LIBRARY_PATH:-}"
{
  nvidia-smi -L
  grep -m1 "model name" /proc/cpuinfo
  echo "cpu flags: $(grep -m1 -o -w -E 'avx2|avx512f|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "cuda libraries: $cuda_libs"
  ldd bin/lockstep-worker bin/compute_gpu_tests | grep "not found" || echo "every library found"
} 2>&1 | tee "$out/machine.txt"
mkdir -p /usr/share/datasets/fashion-mnist
cp -n data/*.gz /usr/share/datasets/fashion-mnist/
step() { case ",$steps," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
if step tests; then
  echo "== gpu tests"
  bin/compute_gpu_tests 2>&1 | tee "$out/gpu-tests.txt" | tail -40
fi
if step bench; then
  echo "== compute benchmark"
  bin/lockstep-bench-compute --device cuda --batch 256,1024,4096 \
    2>&1 | tee "$out/bench-cuda.txt"
  bin/lockstep-bench-compute --device cpu --batch 256 --seconds 1 \
    2>&1 | tee "$out/bench-cpu.txt"
fi
if step accuracy; then
  echo "== 2-conv net, 4 GPU workers, BSP"
  rm -rf runs/gpu-cnn
  bin/lockstep-launch --servers 2 --workers 4 --sync bsp --device cuda \
    --model cnn:c5x32,p2,c5x64,p2,f1024 --data fashion-mnist --batch 64 \
    --optimizer momentum --lr 0.05 --epochs 10 --eval-every 100 \
    --target-accuracy 0.91 --run-dir runs/gpu-cnn --timeout-s 200 \
    2>&1 | tail -5 | tee "$out/accuracy.txt"
  cat runs/gpu-cnn/summary.json >>"$out/accuracy.txt"
  tar -C runs -cJf "$out/accuracy-run.tar.xz" gpu-cnn
fi
if step mixed; then
  echo "== spec 7: mixed devices"
  rm -rf runs/mixed-devices
  bin/lockstep-experiment run experiments/07-mixed-devices.toml \
    --out runs/mixed-devices 2>&1 | tee "$out/mixed.txt" | tail -30
  tar -C runs -cJf "$out/mixed-runs.tar.xz" mixed-devices
fi
echo "== done"
