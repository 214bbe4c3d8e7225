#!/usr/bin/env bash
# Placeholder: installs and starts the services the tests need (owned by the workspace work).
set -euo pipefail
