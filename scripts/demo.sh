#!/usr/bin/env bash
# The main job: installs what it needs, builds only the binaries it runs
# (into build-demo/: the release build in build/, which scripts/test.sh
# uses, keeps its tests, the Python module and the CUDA backend),
# and trains an MLP (256-128) on Fashion-MNIST with 1 coordinator, 2 server
# shards and 4 workers under BSP on this machine. Extra arguments go to lockstep-launch (e.g. -v,
# --epochs 2, --sync bsp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
scripts/build.sh demo
exec build-demo/bin/lockstep-launch --servers 2 --workers 4 --sync bsp \
  --model mlp:256,128 --data fashion-mnist --batch 32 --optimizer momentum \
  --lr 0.05 --epochs 8 --lr-schedule cosine --eval-every 200 \
  --target-accuracy 0.87 "$@"
