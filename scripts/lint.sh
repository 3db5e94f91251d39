#!/usr/bin/env bash
# Static checks, failing on any finding:
#  - clang-format: every C++ file matches .clang-format;
#  - clang-tidy: the checks in .clang-tidy over the sources and tests
#    (tests/.clang-tidy: three checks fewer; not CUDA kernels) and the
#    headers they include, with Clang's thread-safety
#    analysis (-Wthread-safety) on, so a member marked GUARDED_BY(mu_) read
#    without mu_ held is a finding.
# Usage: scripts/lint.sh [--deep] [files...]
#   --deep  also runs the Clang static analyzer (clang-analyzer-*), which
#           triples the time; run it before a large change. Its
#           cplusplus.NewDeleteLeaks reports a leak inside FlatBuffers' own
#           builder (vector_downward.h) that does not exist, so it is off:
#           leaks are LeakSanitizer's job in the ASan pass (detect_leaks=1).
#   files   what to tidy, each on its own (compile database of the lint
#           preset: no unity batches). Without files, the whole tree is
#           tidied through the release build's unity batches: the system
#           headers every file includes are parsed and walked once per
#           batch, not once per file, which takes 40% of the time.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
root="$PWD"
checks=''
if [ "${1:-}" = "--deep" ]; then
  checks='clang-analyzer-*,-clang-analyzer-cplusplus.NewDeleteLeaks'
  shift
fi

echo "== clang-format"
git ls-files '*.cc' '*.h' '*.cu' | xargs clang-format --dry-run -Werror

if [ $# -gt 0 ]; then
  scripts/build.sh lint
  db=build-lint
  files=("$@")
else
  # Configuring writes the unity batches and compile_commands.json; the
  # generated schema header is the only thing built.
  cmake --preset release >/dev/null
  cmake --build build --target lockstep_schemas_gen >/dev/null
  db=build
  # A unity batch includes its .cc files on purpose.
  checks="${checks:+$checks,}-bugprone-suspicious-include"
  mapfile -t files < <(/usr/bin/python3 -c '
import json, sys
for entry in json.load(open("build/compile_commands.json")):
    if not entry["file"].endswith(".cu"):
        print(entry["file"])')
fi
echo "== clang-tidy (${#files[@]} translation units, $jobs at a time${checks:+, checks +$checks})"
# --checks adds to the list in .clang-tidy. Headers (and, in a unity batch,
# its .cc files) are checked when they are this repository's, not the
# build folder's generated schema or the system's.
# The tests' translation units (a unity batch lives in the build folder, so
# clang-tidy would not find tests/.clang-tidy by itself) get that file.
tidy_one() {  # FILE
  local config=()
  case "$1" in */tests/*) config=(--config-file="$root/tests/.clang-tidy") ;; esac
  clang-tidy -p "$db" --quiet "${config[@]}" ${checks:+--checks="$checks"} \
    --header-filter="^$root/(common|coordinator|snapshot_format|optimizers|server|worker|sync_policies|tools|bench|python|tests)/" \
    --warnings-as-errors='*' --extra-arg=-Wthread-safety \
    --extra-arg=-Wno-unknown-warning-option "$1"
}
export -f tidy_one
export db checks root
# One stream over every unit, the largest first (by the bytes of the .cc
# files a unity batch includes), so no core idles behind a long last one.
printf '%s\n' "${files[@]}" | /usr/bin/python3 -c '
import os, re, sys
def size(path):
    text = open(path, errors="replace").read()
    included = re.findall(r"#include \"(/[^\"]+\.cc)\"", text)
    return sum(os.path.getsize(f) for f in included) or len(text)
for path in sorted(sys.stdin.read().split(), key=size, reverse=True):
    print(path)' |
  xargs -P "$jobs" -I{} bash -c 'tidy_one "$1"' _ {} \
    2> >(grep -v "warnings generated" >&2)
echo "lint: clean"
