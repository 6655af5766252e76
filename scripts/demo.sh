#!/usr/bin/env bash
# Install Memdoor with the embedded 0.5B code model, then one agent against a team of three on three small
# problems, side by side, on this CPU (about two minutes on two cores).
#   bash scripts/demo.sh [memdoor demo ARGS]     e.g. --team parallel:5, --out runs/demo
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh local
exec .venv/bin/memdoor demo "$@"
