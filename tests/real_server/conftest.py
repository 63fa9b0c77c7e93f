"""The real server under test: llama.cpp's llama-server serving a tiny model on loopback, started
by scripts/real_server.sh, which sets ASSAY_REAL_SERVER_URL (and ASSAY_REAL_SERVER_MODEL)."""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class LlamaServer:
    """Where the server is, and the judge specs and config tables that reach it."""

    url: str
    model: str

    @property
    def spec(self) -> str:
        return f"llamacpp:{self.model}@{self.url}/v1"

    @property
    def slots(self) -> int:
        """The server's parallel slots: what a local preset's requests in flight follow."""
        return self.props()["total_slots"]

    def props(self) -> dict:
        """llama-server's ``/props``: its slots, context size and chat template."""
        with urllib.request.urlopen(f"{self.url}/props", timeout=10) as reply:
            return json.loads(reply.read())

    def config(self, folder: Path, **structured: str) -> Path:
        """An ``assay.toml`` with one ``[judges.NAME]`` per ``NAME=structured mode``."""
        path = folder / "assay.toml"
        path.write_text(
            "".join(
                f'[judges.{name}]\nspec = "{self.spec}"\nstructured = "{mode}"\n'
                for name, mode in structured.items()
            )
        )
        return path


@pytest.fixture(scope="session")
def llama() -> LlamaServer:
    url = os.environ.get("ASSAY_REAL_SERVER_URL", "").rstrip("/")
    if not url:
        pytest.fail(
            "ASSAY_REAL_SERVER_URL is not set: scripts/real_server.sh starts llama-server "
            "with a tiny model and runs this tier against it"
        )
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=10) as reply:
            assert reply.status == 200
    except OSError as exc:
        pytest.fail(f"llama-server at {url} does not answer /health: {exc}")
    return LlamaServer(url, os.environ.get("ASSAY_REAL_SERVER_MODEL", "gemma-3-270m"))


@pytest.fixture
def outcome(record_property):
    """Record a test's outcome counts; the tier's summary lists them after the run."""

    def record(counts) -> None:
        record_property("outcome", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    return record
