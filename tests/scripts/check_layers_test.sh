#!/usr/bin/env bash
# scripts/check-layers.py over a small tree made up here: it passes a tree
# that keeps server/'s ladder, and fails, naming the breach, a file that
# includes a floor above it or a sibling's floor, two files that include
# each other, two top-level folders that do, and a generated header
# included outside its layer.
# Usage: check_layers_test.sh PATH/TO/check-layers.py
. "$(dirname "$0")/repo_fixture.sh" "$1"
mkdir -p scripts server/shard server/model server/guard server/snapshot \
  common/wire lib
cp "$check" scripts/check-layers.py
header() {  # PATH INCLUDES...
  local path="$1"
  shift
  {
    for i in "$@"; do echo "#include \"$i\""; done
  } >"$path"
  git add "$path"
}
header server/server_process.h server/shard/clock.h
header server/shard/clock.h server/model/store.h server/guard/rules.h
header server/guard/rules.h
header server/snapshot/round.h server/model/store.h
header server/model/store.h common/wire/message.h
header common/wire/message.h schemas/lockstep_generated.h
header lib/user.h common/wire/message.h
run() { /usr/bin/python3 scripts/check-layers.py >"$tmp/out" 2>&1; }
expect_ok() {
  run || fail "a layered tree refused: $(cat "$tmp/out")"
}
expect_refused() {  # TEXT
  if run; then fail "passed: $(cat "$tmp/out")"; fi
  grep -qF "$1" "$tmp/out" || fail "no '$1' in: $(cat "$tmp/out")"
}
expect_ok

header server/model/store.h server/shard/clock.h
expect_refused "server/model/store.h includes server/shard/clock.h, a floor above it"
header server/model/store.h common/wire/message.h

header server/guard/rules.h server/snapshot/round.h
expect_refused "server/guard/rules.h includes server/snapshot/round.h, a floor beside it"
header server/guard/rules.h

header server/shard/a.h server/shard/b.h
header server/shard/b.h server/shard/a.h
expect_refused "files include each other: server/shard/a.h -> server/shard/b.h"
git rm -qf server/shard/a.h server/shard/b.h

header common/wire/codec.h lib/user.h
expect_refused "top-level folders include each other: common, lib"
git rm -qf common/wire/codec.h

header lib/fast.h schemas/lockstep_generated.h
expect_refused "lib/fast.h includes schemas/lockstep_generated.h, which only common/wire/ may include"
git rm -qf lib/fast.h
expect_ok
echo "check-layers: every breach refused"
