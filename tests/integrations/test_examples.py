"""The integrations' documented examples run as written (docs/inspect.md, docs/verifiers.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script, expected", [
    ("inspect_healthbench.py", "HealthBench overall 0.154  mean 0.154  stderr 0.076"),
    ("verifiers_grpo.py", "example 1  reward 0.158  withheld 0"),
])
def test_the_documented_example_runs_and_prints_what_the_page_shows(script, expected, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "integrations" / script)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
                          env={"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path),
                               "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout
