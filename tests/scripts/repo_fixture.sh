# Sourced by the tests of the repository checks: $check is the script under
# test (its path as given), $tmp a fresh git repository made the working
# folder and removed on exit, fail() ends the test naming why.
# Usage: . repo_fixture.sh PATH/TO/SCRIPT
set -euo pipefail
check="$(realpath "$1")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
git init -q .
