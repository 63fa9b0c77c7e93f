"""Every command's example (``assay.cli.examples``) runs as written, in order, from a fresh
directory holding the repository's ``examples/``, with each ``openai:MODEL`` it names pointed at
a fake judge started with the example's scripted options; and each ``--help`` ends with it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from assay.cli.examples import EXAMPLES, Example

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
JUDGE_SPEC = re.compile(r"\b(?:openai|anthropic):([A-Za-z0-9._\-]+)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 30.0) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{url}: the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                return int(reply.status)
        except urllib.error.HTTPError as error:
            return int(error.code)
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url}: no answer in {seconds} s")


class Workspace:
    """The directory the examples run in, and the fake judges they talk to."""

    def __init__(self, path: Path) -> None:
        self.path = path
        (path / "examples").symlink_to(ROOT / "examples")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(path / "home"),
            "ASSAY_DATA": str(path / "data"),
            "NO_COLOR": "1",
        }
        self.fakes: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}

    def fake_judge(self, options: str) -> int:
        if options not in self.fakes:
            port = _free_port()
            process = subprocess.Popen(
                ["bash", "-c", f"exec assay fake-judge --port {port} {options}"],
                cwd=self.path, env=self.env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            _wait_for(f"http://127.0.0.1:{port}/v1/models", process)
            self.fakes[options] = (port, process)
        return self.fakes[options][0]

    def command_line(self, example: Example) -> str:
        line = example.line
        if example.fake is not None:
            port = self.fake_judge(example.fake)
            line = JUDGE_SPEC.sub(
                lambda m: f"openai-compatible:{m.group(1)}@http://127.0.0.1:{port}/v1", line
            )
        return line

    def run(self, example: Example) -> None:
        line = self.command_line(example)
        if example.before is not None:
            line = f"{example.before} && {line}"
        if example.server is not None:
            self.serve(line, example.server)
            return
        done = subprocess.run(
            ["bash", "-c", line], cwd=self.path, env=self.env,
            capture_output=True, text=True, timeout=300, check=False,
        )
        assert done.returncode == 0, f"{line}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"

    def serve(self, line: str, path: str) -> None:
        port = _free_port()
        line = re.sub(r"--port \d+", f"--port {port}", line)
        process = subprocess.Popen(
            ["bash", "-c", f"exec {line}"], cwd=self.path, env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            status = _wait_for(f"http://127.0.0.1:{port}{path}", process)
            assert status == 200, f"{line}: GET {path} answered {status}"
        finally:
            process.terminate()
            process.wait(timeout=30)

    def close(self) -> None:
        for _, process in self.fakes.values():
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    space = Workspace(tmp_path_factory.mktemp("examples"))
    yield space
    space.close()


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.command for e in EXAMPLES])
def test_the_example_runs_as_written(workspace, example):
    workspace.run(example)
