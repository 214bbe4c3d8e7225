#!/usr/bin/env bash
# Installs and starts the services the workspace tests need, on a fresh Debian 12 machine, as root:
#   - packages docker.io, bubblewrap, debootstrap (skipped when already installed);
#   - dockerd (started in the background when `docker info` does not answer);
#   - the offline Docker test image (debootstrap minbase + python3, then `docker import`), cached
#     in /var/cache/pytest-agent-skills so a second run on the same machine is instant. The image
#     carries a recipe label; changing RECIPE below rebuilds it.
# Idempotent; a second run takes well under a second. No image registry is used.
set -euo pipefail

# Always our own name: SKILLS_DOCKER_IMAGE may name a user's image, which must never be replaced.
IMAGE="pytest-agent-skills/test:bookworm"
CACHE_DIR="${SKILLS_IMAGE_CACHE:-/var/cache/pytest-agent-skills}"
# python3-minimal alone has no json/csv modules; python3 adds the standard library (~20 MB).
PACKAGES="python3-minimal,python3"
RECIPE="bookworm-minbase-${PACKAGES//,/-}-v1"
TARBALL="$CACHE_DIR/$RECIPE.tar"
DOCKERD_WAIT_SECONDS="${DOCKERD_WAIT_SECONDS:-60}"

log() { echo "setup-services: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = "0" ] || die "run me as root (installs packages, starts dockerd)"

# --- packages -------------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)  # a docker client alone (no engine) is not enough
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Keep package scripts from starting services (no init system in CI containers); we start
    # dockerd ourselves below.
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
fi

# --- dockerd --------------------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
    command -v dockerd >/dev/null 2>&1 || die "docker client present but no dockerd; apt-get install docker.io"
    log "starting dockerd (log: /var/log/dockerd.log)"
    nohup dockerd >/var/log/dockerd.log 2>&1 &
    waited=0
    until docker info >/dev/null 2>&1; do
        if [ "$waited" -ge "$DOCKERD_WAIT_SECONDS" ]; then
            tail -n 20 /var/log/dockerd.log >&2 || true
            die "dockerd did not answer 'docker info' within ${DOCKERD_WAIT_SECONDS}s (see /var/log/dockerd.log)"
        fi
        sleep 1
        waited=$((waited + 1))
    done
fi

# --- the offline test image -----------------------------------------------------------------
# The Debian mirror as apt is configured (deb822 "URIs:" or one-line "deb URL suite ..."),
# so debootstrap works wherever apt works (no other network is reachable).
debian_mirror() {
    local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
    local url
    url=$(cat "${files[@]}" 2>/dev/null | awk '
        /^[[:space:]]*#/ { next }
        /^deb[[:space:]]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }
        /^URIs:/ { print $2 }
    ' | grep -E '/debian(/|$)' | grep -v security | head -n 1 || true)
    echo "${url:-http://deb.debian.org/debian}"
}

current_recipe=$(docker image inspect --format '{{ index .Config.Labels "pytest-agent-skills.recipe" }}' \
    "$IMAGE" 2>/dev/null || true)
if [ "$current_recipe" != "$RECIPE" ]; then
    mkdir -p "$CACHE_DIR"
    if [ ! -s "$TARBALL" ]; then
        mirror=$(debian_mirror)
        rootfs=$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")
        log "building $IMAGE with debootstrap from $mirror (one-time, a few minutes)"
        if ! debootstrap --variant=minbase --include="$PACKAGES" bookworm "$rootfs" "$mirror" \
            >"$CACHE_DIR/debootstrap.log" 2>&1; then
            tail -n 20 "$CACHE_DIR/debootstrap.log" >&2 || true
            rm -rf "$rootfs"
            die "debootstrap failed (full log: $CACHE_DIR/debootstrap.log)"
        fi
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar -C "$rootfs" -c . >"$TARBALL.tmp"
        mv -f "$TARBALL.tmp" "$TARBALL"
        rm -rf "$rootfs"
    fi
    old_id=$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
    log "importing $TARBALL as $IMAGE"
    docker import --change 'CMD ["/bin/bash"]' --change "LABEL pytest-agent-skills.recipe=$RECIPE" \
        - "$IMAGE" <"$TARBALL" >/dev/null
    if [ -n "$old_id" ]; then docker rmi "$old_id" >/dev/null 2>&1 || true; fi  # the outdated recipe
fi
log "ready: docker $(docker version --format '{{.Server.Version}}'), bwrap $(bwrap --version | cut -d' ' -f2), image $IMAGE"
