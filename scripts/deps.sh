#!/usr/bin/env bash
# deps.sh: install the Debian 12 packages that building and testing mfu need.
# Idempotent and quiet when everything is present; uses apt-get (as root, or through sudo).
# usage: scripts/deps.sh            (build + test dependencies)
set -euo pipefail

pkgs=(
  gcc make cmake pkg-config        # toolchain
  libjansson-dev                   # JSON documents (config.json, --json output, JSON-lines logs)
  zlib1g-dev libzstd-dev           # compressed logs (.gz, .zst)
  libsqlite3-dev sqlite3           # the run store (mfu ingest / runs / rm); the CLI for tests
  libcmocka-dev                    # unit tests
  libmicrohttpd-dev                # mfu serve (HTTP)
  curl                             # e2e tests of mfu serve
  prometheus                       # tests/e2e/prometheus.sh: a real scrape and promtool
  wrk                              # bench/serve_series.sh: HTTP load generator
  python3                          # tests that drive the CLI and compare numbers (/usr/bin/python3)
  python3-venv python3-torch       # the Python package's tests: pip install in a new venv, PyTorch
  jq                               # e2e tests read --json output
  chromium                         # browser tests: the dashboard (tests/browser/), the HTML report
  clang-14 libclang-rt-14-dev      # the clang + ASan/UBSan suite, libFuzzer (make fuzz)
  clang-format-14                  # lint.format: the one clang-format the tree is formatted with
  cppcheck                         # lint.cppcheck (Debian 12: 2.10; scripts/lint checks it)
)
# node and npm build the dashboard (web/) and drive its test; a machine may have them from
# elsewhere than Debian (NodeSource's nodejs bundles npm), so ask for Debian's only when absent.
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)

# web/node_modules: uPlot (embedded into mfu serve), playwright-core (the browser test),
# typescript and @grafana/schema (the Grafana dashboard's schema test), at the versions in
# web/package-lock.json, from the npm registry; then web/dist.
web_deps() {
  local web
  web="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/web"
  local missing_pkg=0 p
  for p in uplot playwright-core typescript @grafana/schema; do
    [ -f "$web/node_modules/$p/package.json" ] || missing_pkg=1
  done
  if [ -f "$web/package-lock.json" ] && [ "$missing_pkg" = 1 ]; then
    echo "deps.sh: npm ci in web/" >&2
    (cd "$web" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  # web/dist: the files mfu serve embeds (a copy; unchanged files are left alone)
  [ -f "$web/build.sh" ] && bash "$web/build.sh"
}

missing=()
for p in "${pkgs[@]}"; do
  [ "$p" = "#" ] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# build/pyenv: the pinned PyPI packages of the Python tests over Debian's torch (scripts/pyenv.sh)
py_deps() {
  bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pyenv.sh"
}

if [ ${#missing[@]} -eq 0 ]; then
  web_deps
  py_deps
  exit 0
fi

echo "deps.sh: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
web_deps
py_deps
