#!/usr/bin/env bash
# Installs, as root, the Debian packages whose commands are missing. Each argument is
# COMMAND=PACKAGE (bwrap=bubblewrap; COMMAND a name on PATH or a path): a package whose command is
# found is left alone, so a second run installs nothing. Package scripts are kept from starting
# services (no init system in CI containers). Shared by setup-services.sh (the tests' services),
# setup-realmodel.sh (the compiler it builds with) and setup-example.sh (bubblewrap for the
# example's eval items).
set -euo pipefail

log() { echo "install-packages: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = "0" ] || die "run me as root (apt-get install)"

missing=()
for pair in "$@"; do
    case "$pair" in
        ?*=?*) ;;
        *) die "'$pair': give each package as COMMAND=PACKAGE (bwrap=bubblewrap)" ;;
    esac
    command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=("${pair#*=}")
done
[ "${#missing[@]}" -gt 0 ] || exit 0

log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
fi
apt-get update -qq
status=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi
[ "$status" = 0 ] || die "apt-get install ${missing[*]} failed (exit $status)"
