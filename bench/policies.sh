#!/usr/bin/env bash
# Sync-policy benchmark (not a test): 4 workers on Fashion-MNIST, one
# emulated 4x slower per sample, time to 0.85 test accuracy for BSP, SSP(3),
# ASP, backup workers (b=1) and LB-BSP (analytical NARX and numerical).
# Prints a markdown table with each policy's speedup over BSP measured in
# the same run. Usage: bench/policies.sh [REPEAT] [extra launcher flags]
set -euo pipefail
cd "$(dirname "$0")/.."
repeat="${1:-1}"
shift || true
out="runs/bench-policies-$(date -u +%Y%m%dT%H%M%SZ)"
# Per-sample emulated cost 0.4 ms (worker 3: 1.6 ms) plus 2 ms per clock:
# compute dominates, as on a CPU cluster, and it grows with the batch, so
# re-sizing batches has something to balance.
exec build/bin/lockstep-experiment --repeat "$repeat" --out-dir "$out" \
  --policies bsp,ssp:3,asp,backup:1,lbbsp:analytical:narx,lbbsp:numerical \
  -- --servers 2 --workers 4 --model mlp:128 --batch 32 \
  --optimizer momentum --lr 0.05 --epochs 6 --eval-every 25 \
  --target-accuracy 0.85 --data-order global \
  --hetero "*:linear=0.002+0.0004;w3:x4" "$@"
