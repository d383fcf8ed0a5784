#!/usr/bin/env bash
# build.sh: make web/dist/ (index.html, app.js, app.css, trace.js, uplot.min.js, uplot.min.css), the
# files `mfu serve` embeds. The page is copied from web/src; uPlot's files come from the npm
# package pinned in package-lock.json (installed with `npm ci` when web/node_modules lacks it).
# usage: bash web/build.sh [OUTDIR]     (default web/dist; prints nothing when all is well)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/dist}"
uplot="$here/node_modules/uplot/dist"
if [ ! -f "$uplot/uPlot.iife.min.js" ]; then
  command -v npm >/dev/null || { echo "build.sh: npm is needed to install uPlot (scripts/deps.sh installs it)" >&2; exit 1; }
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
mkdir -p "$out"
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cp "$here/src/index.html" "$here/src/app.js" "$here/src/app.css" "$here/src/trace.js" "$tmp/"
cp "$uplot/uPlot.iife.min.js" "$tmp/uplot.min.js"
cp "$uplot/uPlot.min.css" "$tmp/uplot.min.css"
# replace changed files one by one (rename is atomic: a build running beside never sees a half
# file); unchanged ones keep their time stamps, so the embedding step is not run again
for f in index.html app.js app.css trace.js uplot.min.js uplot.min.css; do
  cmp -s "$tmp/$f" "$out/$f" || mv -f "$tmp/$f" "$out/$f"
done
