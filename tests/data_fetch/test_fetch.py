"""``assay data fetch``: official files downloaded on request, checked, never used unchecked.

A loopback HTTP server plays the publisher: it serves fixture files whole, cut short, or
corrupted, so every path of the download is tested offline.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from assay.datasets import data_file, fetch, local_copy
from assay.errors import AssayError, ConfigError

FIXTURE = (Path(__file__).resolve().parents[1] / "data" / "healthbench" / "dev.jsonl").read_bytes()
SHA = hashlib.sha256(FIXTURE).hexdigest()


class Publisher(http.server.BaseHTTPRequestHandler):
    """Serves ``FIXTURE``; each request takes the next behaviour of the server's script."""

    def do_GET(self) -> None:
        script = self.server.script  # type: ignore[attr-defined]
        behaviour = script.pop(0) if script else "whole"
        self.server.hits += 1  # type: ignore[attr-defined]
        body = FIXTURE
        if behaviour == "corrupt":
            body = FIXTURE[:-10] + b"X" * 10
        self.send_response(200)
        self.send_header("Content-Length", str(len(FIXTURE)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if behaviour == "truncated" else body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def publisher():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Publisher)
    server.script, server.hits = [], 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/hard.jsonl"


def test_the_urls_are_simple_evals_own():
    assert data_file("healthbench", "hard").url == (
        "https://openaipublic.blob.core.windows.net/simple-evals/healthbench/"
        "hard_2025-05-08-21-00-10.jsonl")
    assert data_file("healthbench", "meta-eval").url.endswith(
        "/2025-05-07-06-14-12_oss_meta_eval.jsonl")


def test_a_checked_download_is_stored_and_found_by_eval(publisher, tmp_path):
    path = fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path)
    assert path.read_bytes() == FIXTURE
    assert local_copy("healthbench", "hard", data_root=tmp_path) == path
    fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path)
    assert publisher.hits == 1  # a stored, matching file is not fetched again


def test_a_truncated_download_is_retried_and_never_used(publisher, tmp_path):
    publisher.script = ["truncated", "corrupt"]
    path = fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path)
    assert publisher.hits == 3 and path.read_bytes() == FIXTURE


def test_a_download_that_never_matches_is_refused_and_nothing_is_left(publisher, tmp_path):
    publisher.script = ["corrupt"] * 3
    with pytest.raises(AssayError, match="refused, nothing stored: SHA-256"):
        fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path)
    assert list((tmp_path / "healthbench").iterdir()) == []
    with pytest.raises(ConfigError, match="assay data fetch healthbench --subset hard"):
        local_copy("healthbench", "hard", data_root=tmp_path)


def test_a_file_without_a_pin_is_not_kept_without_the_users_hash(publisher, tmp_path):
    with pytest.raises(ConfigError, match="no pinned SHA-256"):
        fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path)
    assert publisher.hits == 0


def test_a_stored_file_changed_afterwards_is_refused(publisher, tmp_path):
    path = fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path)
    path.write_bytes(FIXTURE + b"\n")
    with pytest.raises(ConfigError, match="changed since it was fetched"):
        local_copy("healthbench", "hard", data_root=tmp_path)


def test_a_local_copy_is_imported_with_the_same_checks(tmp_path):
    source = tmp_path / "copy.jsonl"
    source.write_bytes(FIXTURE)
    path = fetch("healthbench", "all", source=source, sha256=SHA, data_root=tmp_path / "d")
    assert path.name == "2025-05-07-06-14-12_oss_eval.jsonl"
    with pytest.raises(AssayError, match="refused"):
        fetch("healthbench", "consensus", source=source, sha256="0" * 64,
              data_root=tmp_path / "d")


async def test_eval_healthbench_reads_the_fetched_copy(publisher, serve, tmp_path):
    from assay.evaluation import aevaluate
    from assay.testing import ModelScript

    fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path / "d")
    server = await serve(models={"bot": ModelScript()})
    result = await aevaluate("healthbench", subset="hard", data_root=tmp_path / "d",
                             examples=2, run_dir=tmp_path / "ev",
                             model=f"openai-compatible:bot@{server.base_url}",
                             judges=[f"openai-compatible:fake@{server.base_url}"])
    assert result.stage == "done" and result.metrics["overall_score:n_samples"] == 2
