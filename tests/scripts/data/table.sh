#!/usr/bin/env bash
# A fixture for validation_update_test.sh: prints a markdown table of its arguments (after the
# binary update.sh passes first); fails when the first one is "fail".
[ "${2:-}" = "fail" ] && { echo "fixture failed on purpose" >&2; exit 3; }
echo "| binary | args |"
echo "|---|---|"
echo "| $(basename "$1") | ${*:2} |"
