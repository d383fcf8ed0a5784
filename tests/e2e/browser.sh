#!/usr/bin/env bash
# e2e: the dashboard in Debian's chromium, driven by playwright-core (tests/browser/).
# Env: MFU_BIN, MFU_SOURCE_DIR; MFU_TEST_OUT (screenshots go to $MFU_TEST_OUT/browser; default
# build/test-out). Needs node, npm and /usr/bin/chromium (scripts/deps.sh installs them);
# installs web/node_modules with `npm ci` and builds web/dist when they are missing.
set -euo pipefail
src=${MFU_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export MFU_SOURCE_DIR=$src
export MFU_TEST_OUT=${MFU_TEST_OUT:-$src/build/test-out}
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "browser.sh: $tool is missing; run scripts/deps.sh" >&2; exit 1; }
done
chromium=${MFU_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "browser.sh: $chromium is missing; run scripts/deps.sh (Debian's chromium)" >&2; exit 1; }
web=$src/web
# one installer at a time: the plain and the sanitizer builds may run this test together
exec 9>"${TMPDIR:-/tmp}/mfu-web-npm.lock"
flock -w 300 9
if [ ! -f "$web/node_modules/playwright-core/package.json" ] || [ ! -f "$web/node_modules/uplot/package.json" ]; then
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
bash "$web/build.sh"
flock -u 9
cd "$src"
exec node --test --test-reporter=spec "$src/tests/browser/dashboard.test.mjs"
