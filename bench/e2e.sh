#!/usr/bin/env bash
# End-to-end benchmark (not a test): BSP, 4 workers, 2 shards on this
# machine. Two jobs: the Fashion-MNIST MLP 256-128 (235k parameters) and a
# ~11.6M-parameter MLP (784-4096-2048-10) where communication dominates,
# each over every data transport in $TRANSPORTS (default "ipc zmq-tcp": the
# launcher's default, Lockstep's direct transport over Unix sockets, and
# the ZeroMQ data port over TCP loopback for comparison).
# Prints clocks/s, samples/s and the share of each clock spent computing,
# pushing, pulling and waiting. Usage: bench/e2e.sh [CLOCKS]
set -euo pipefail
cd "$(dirname "$0")/.."
clocks="${1:-600}"
transports="${TRANSPORTS:-ipc zmq-tcp}"
out="runs/bench-e2e-$(date -u +%Y%m%dT%H%M%SZ)"
for model in mlp:256,128 mlp:4096,2048; do
  for transport in $transports; do
    name="${model//[:,]/-}-$transport"
    echo "== $model over $transport"
    build/bin/lockstep-experiment --policies bsp --out-dir "$out/$name" -- \
      --servers 2 --workers 4 --model "$model" --batch 32 --clocks "$clocks" \
      --eval-every 0 --test-limit 1000 --data-transport "$transport"
  done
done
