#!/usr/bin/env bash
# Create .venv and install Assay with its test extras. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# PyTorch's CPU build first (sentence-transformers would otherwise pull a CUDA build of GBs).
.venv/bin/python -m pip install --quiet 'torch==2.13.0'
.venv/bin/python -m pip install --quiet -e '.[dev,embeddings]'
echo "assay installed in .venv ($(.venv/bin/assay --version 2>/dev/null || echo ok))"
