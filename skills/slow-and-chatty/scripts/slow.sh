#!/usr/bin/env bash
# Print, sleep in a child process, print again.
set -eu
seconds="${1:-5}"
echo "started"
sleep "$seconds" &
wait $!
echo "finished"
