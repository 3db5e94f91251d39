#!/usr/bin/env bash
# End-to-end benchmark (not a test): the jobs of bench/e2e.toml (BSP, 4
# workers, 2 shards, two MLPs over two data transports), run through
# lockstep-experiment into a fresh folder under runs/. Prints each
# scenario's tables: clocks/s, samples/s and the share of each clock spent
# computing, pushing, pulling and waiting.
set -euo pipefail
cd "$(dirname "$0")/.."
exec build/bin/lockstep-experiment run bench/e2e.toml \
  --out "runs/bench-e2e-$(date -u +%Y%m%dT%H%M%SZ)"
