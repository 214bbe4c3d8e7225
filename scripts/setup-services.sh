#!/usr/bin/env bash
# Installs and starts the services the workspace tests need, on a fresh Debian 12 machine, as root:
#   - packages docker.io, bubblewrap, debootstrap, strace, iptables, iproute2, and chromium with chromium-driver for the
#     headless-browser tests of the HTML reports (each skipped when already installed);
#   - dockerd (started in the background when `docker info` does not answer);
#   - the offline Docker test image, by `agent-skills docker-image` (debootstrap minbase + python3,
#     then `docker import`), cached in /var/cache/pytest-agent-skills so a second run on the same
#     machine is instant. The image carries a recipe label; a new recipe in the package rebuilds it.
# Needs the package installed (scripts/test.sh installs it first). Idempotent; a second run takes
# well under a second. No image registry is used.
set -euo pipefail

# Always our own name: SKILLS_DOCKER_IMAGE may name a user's image, which must never be replaced.
IMAGE="pytest-agent-skills/test:bookworm"
DOCKERD_WAIT_SECONDS="${DOCKERD_WAIT_SECONDS:-60}"

log() { echo "setup-services: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = "0" ] || die "run me as root (installs packages, starts dockerd)"

# --- packages -------------------------------------------------------------------------------
# A docker client alone (no engine) is not enough: the command looked for is dockerd. strace,
# iptables and ip: the detonation run of 'agent-skills audit --dynamic' (strace records a run's
# file opens and writes, iptables sends its every connection to the sink, ip routes it there).
bash "$(dirname "$0")/install-packages.sh" dockerd=docker.io bwrap=bubblewrap \
    debootstrap=debootstrap strace=strace /usr/sbin/iptables=iptables ip=iproute2 \
    chromium=chromium chromedriver=chromium-driver

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
# Built by the package itself (agent-skills docker-image): debootstrap minbase + python3 from the
# apt-configured Debian mirror, the tarball cached in $SKILLS_IMAGE_CACHE
# (default /var/cache/pytest-agent-skills), imported with a recipe label; a matching image is
# left alone, and an image of that name that the builder did not make is never replaced.
python3 -m pytest_agent_skills.cli docker-image --image "$IMAGE" \
    || die "agent-skills docker-image failed (see above)"
log "ready: docker $(docker version --format '{{.Server.Version}}'), bwrap $(bwrap --version | cut -d' ' -f2), $(chromium --version 2>/dev/null | cut -d' ' -f1-2), image $IMAGE"
