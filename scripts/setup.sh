#!/usr/bin/env bash
# Create .venv (or complete the quickstart's) and install Assay with every dependency, its
# extras and the test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# PyTorch's CPU build first (sentence-transformers would otherwise pull a CUDA build of GBs).
# Extras: embeddings (MiniLM, offline), rl (TRL, for the GRPO adapter's tests), distributed (Ray),
# docs (MkDocs, the manual), pages (Trafilatura: web search hits' page text), inspect (Inspect AI
# and inspect_evals: the scorer and logs), verifiers (the GRPO rubric).
.venv/bin/python -m pip install --quiet 'torch==2.13.0'
.venv/bin/python -m pip install --quiet -e '.[dev,embeddings,rl,distributed,docs,pages,inspect,verifiers]'
# Headless Chromium for the browser tests of assay report / assay review (Debian's package;
# Playwright drives it and never downloads a browser of its own).
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "assay installed in .venv ($(.venv/bin/assay --version 2>/dev/null || echo ok))"
