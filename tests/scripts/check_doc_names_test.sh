#!/usr/bin/env bash
# scripts/check-doc-names.py over a small tree made up here: it passes
# pages whose paths, classes and flags exist, and fails, naming each, a
# page that names a moved file, a class nobody declares and a flag no
# parser knows.
# Usage: check_doc_names_test.sh PATH/TO/check-doc-names.py
. "$(dirname "$0")/repo_fixture.sh" "$1"
mkdir -p scripts server/shard docs
cp "$check" scripts/check-doc-names.py
printf 'class ShardClock {};\nconst char* kFlags[] = {"max-lag", "resume"};\n' \
  >server/shard/shard_clock.h
echo "# Lockstep" >README.md
cat >docs/design.md <<'END'
The clock is `ShardClock` (server/shard/shard_clock.h), in `server/shard/`;
run with `--max-lag 3` or `lockstep-server --resume`. Worker N is worker/N.
```sh
mkdir -p deploy/local/mine
```
Then deploy/local/mine/kustomization.yaml.
END
git add -A
run() { /usr/bin/python3 scripts/check-doc-names.py >"$tmp/out" 2>&1; }
run || fail "a true page refused: $(cat "$tmp/out")"
echo 'See server/shard_clock.h.' >>docs/design.md
if run; then fail "a moved file passed"; fi
grep -qF "docs/design.md:7: no such path: server/shard_clock.h" "$tmp/out" ||
  fail "no moved file in: $(cat "$tmp/out")"
echo 'It is `ShardClocks`, flag `--max-lags`.' >>docs/design.md
if run; then fail "a missing class and flag passed"; fi
grep -qF "docs/design.md:8: no such name: ShardClocks" "$tmp/out" ||
  fail "no missing class in: $(cat "$tmp/out")"
grep -qF "docs/design.md:8: no such flag: --max-lags" "$tmp/out" ||
  fail "no missing flag in: $(cat "$tmp/out")"
echo "check-doc-names: every false name refused"
