#!/usr/bin/env bash
# Install Memdoor and what it needs on a fresh Debian/Ubuntu machine (idempotent).
#   bash scripts/install.sh [EXTRAS]     default EXTRAS: local   (e.g. all, "local,redis")
# System packages (when root, or with sudo): bubblewrap (the sandbox), redis-server (distributed mode, tests).
# Python: a virtual environment in .venv with memdoor[EXTRAS].
set -euo pipefail
cd "$(dirname "$0")/.."
extras=${1:-local}

need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v redis-server >/dev/null || need+=(redis-server)
[ -x /usr/bin/python3 ] || need+=(python3)
# candidates run on the system's python3 inside the sandbox; LiveCodeBench solutions may import numpy
/usr/bin/python3 -c "import numpy" 2>/dev/null || need+=(python3-numpy)
command -v prlimit >/dev/null || need+=(util-linux)
command -v git >/dev/null || need+=(git)  # memdoor review applies diffs with git apply
command -v node >/dev/null || need+=(nodejs)  # JavaScript candidates (HumanEval-X)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "memdoor install: system packages: ${need[*]}"
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
py=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$py" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[${extras}]"
echo "memdoor install: ok ($(.venv/bin/memdoor --version), extras: ${extras})"

# Optional, after the main path: Rust candidates need a world-readable toolchain and HumanEval-X's crates
# prebuilt in /opt/memdoor/rust. A machine where that cannot be installed still runs everything in Python and
# JavaScript: a warning here, and `memdoor doctor` says the same (scripts/test.sh insists, the tests need it).
if ! bash scripts/install_rust.sh; then
  echo "memdoor install: WARNING: the Rust toolchain for the sandbox could not be installed; Rust candidates" \
    "will not run here (Python and JavaScript do). Details: memdoor doctor; retry: bash scripts/install_rust.sh" >&2
fi
