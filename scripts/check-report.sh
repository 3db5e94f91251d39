#!/usr/bin/env bash
# Opens an experiment's report.html in a real headless browser (Debian's
# chromium), checks that the browser drew every plot it embeds, and saves a
# screenshot of the whole page to DIR/report-screenshot.png to look at.
# Usage: scripts/check-report.sh DIR   (DIR as given to lockstep-experiment)
set -euo pipefail
dir="$(realpath "${1:?usage: $0 EXPERIMENT_DIR}")"
page="$dir/report.html"
[ -f "$page" ] || { echo "no $page: run lockstep-experiment report $1" >&2; exit 1; }
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars
       --virtual-time-budget=10000)
# The page's title ends "[drawn/embedded plots]" once it has loaded.
title="$(chromium "${flags[@]}" --dump-dom "file://$page" 2>/dev/null |
         grep -o '<title>[^<]*</title>' || true)"
counts="$(sed -n 's/.*\[\([0-9]*\)\/\([0-9]*\) plots\].*/\1 \2/p' <<<"$title")"
read -r drawn embedded <<<"${counts:-0 -1}"
# Tall enough for every scenario's five plots and tables.
height=$(( 1400 + 2600 * $(grep -c '<h2>' "$page") ))
chromium "${flags[@]}" --window-size=1200,"$height" \
  --screenshot="$dir/report-screenshot.png" "file://$page" >/dev/null 2>&1
echo "browser drew $drawn of $embedded plots; screenshot: $dir/report-screenshot.png"
[ "$embedded" -gt 0 ] && [ "$drawn" -eq "$embedded" ]
