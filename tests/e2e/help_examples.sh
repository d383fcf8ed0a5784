#!/usr/bin/env bash
# e2e: every example printed by `mfu --help` and `mfu COMMAND --help` runs, and exits 0 or the
# status its help documents (servers and followers keep running until Ctrl-C). The examples are
# read from the help texts, so what a user copies is what is tested (tests/e2e/lib/help_examples.py).
set -u
exec /usr/bin/python3 "$(dirname "$0")/lib/help_examples.py"
