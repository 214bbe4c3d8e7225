#!/usr/bin/env bash
# Print LINES numbered lines to stdout, and a warning every 1000 lines to stderr.
set -eu
lines="${1:-100}"
i=1
while [ "$i" -le "$lines" ]; do
    echo "line $i of $lines: the quick brown fox jumps over the lazy dog"
    if [ $((i % 1000)) -eq 0 ]; then
        echo "warning: $i lines so far" >&2
    fi
    i=$((i + 1))
done
