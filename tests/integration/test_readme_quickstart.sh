#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's three quick starts (one host, a CI job, a fleet) run as written against
# agents on copies of the fixture hosts: a command that fails, or an output line the
# README shows that no longer appears, fails the test (readme_quickstart.py says how the
# README marks them and what the test supplies). Everything it starts is stopped.
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
exec python3 "$(dirname "$0")/readme_quickstart.py"
