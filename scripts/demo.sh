#!/usr/bin/env bash
# Install Memdoor with the embedded 0.5B code model and let a team solve a problem on this CPU.
#   bash scripts/demo.sh [PROBLEM_ID] [STRATEGY]     default: run-length parallel
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh local
problem=${1:-run-length}; strategy=${2:-parallel}
exec .venv/bin/memdoor solve examples/problems.yaml --problem "$problem" --strategy "$strategy" --agents 3 \
  --model local:qwen2.5-coder-0.5b
