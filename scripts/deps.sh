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
  python3                          # tests that drive the CLI and compare numbers (/usr/bin/python3)
  jq                               # e2e tests read --json output
  chromium                         # e2e: the HTML report rendered by a real browser (headless)
)

missing=()
for p in "${pkgs[@]}"; do
  [ "$p" = "#" ] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
