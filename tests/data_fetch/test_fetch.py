"""``assay data fetch``: official files downloaded on request, checked for what the official file
holds, their SHA-256 trusted on first use in a lock file, never used unchecked.

A loopback HTTP server plays the publisher: it serves a stand-in of the hard file (its official
row count and shape: :mod:`assay.testing.standin_data`) whole, cut short, or corrupted, so every
path of the download is tested offline.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from assay.datasets import DataLock, data_file, fetch, local_copy
from assay.errors import AssayError, ConfigError, InputError
from assay.testing import standin_rows, write_standin

ASSAY = [str(Path(sys.executable).parent / "assay")]
DEV = Path(__file__).resolve().parents[1] / "data" / "healthbench" / "dev.jsonl"
HARD = b"".join(json.dumps(row).encode() + b"\n" for row in standin_rows("hard"))
SHA = hashlib.sha256(HARD).hexdigest()


class Publisher(http.server.BaseHTTPRequestHandler):
    """Serves ``HARD``; each request takes the next behaviour of the server's script."""

    def do_GET(self) -> None:
        script = self.server.script  # type: ignore[attr-defined]
        behaviour = script.pop(0) if script else "whole"
        self.server.hits += 1  # type: ignore[attr-defined]
        body = self.server.body  # type: ignore[attr-defined]
        declared = len(body)
        if behaviour == "corrupt":
            body = body[:-10] + b"X" * 10
        self.send_response(200)
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if behaviour == "truncated" else body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def publisher():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Publisher)
    server.script, server.hits, server.body = [], 0, HARD  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def lock(tmp_path) -> Path:
    return tmp_path / "assay-data.lock"


def url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/hard.jsonl"


def test_the_urls_are_simple_evals_own():
    assert data_file("healthbench", "hard").url == (
        "https://openaipublic.blob.core.windows.net/simple-evals/healthbench/"
        "hard_2025-05-08-21-00-10.jsonl")
    assert data_file("healthbench", "meta-eval").url.endswith(
        "/2025-05-07-06-14-12_oss_meta_eval.jsonl")


def test_the_first_good_file_is_stored_and_its_hash_recorded_in_the_lock(publisher, tmp_path,
                                                                        lock):
    path = fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path, lock=lock)
    assert path.read_bytes() == HARD
    entry = DataLock(lock).trusted("healthbench/hard")
    assert entry["sha256"] == SHA and entry["rows"] == 1000
    assert local_copy("healthbench", "hard", data_root=tmp_path, lock=lock) == path
    fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path, lock=lock)
    assert publisher.hits == 1  # a stored file matching the lock is not fetched again


def test_a_later_file_with_another_hash_is_refused_unless_told(publisher, tmp_path, lock):
    fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path / "a", lock=lock)
    rows = list(standin_rows("hard"))
    rows[0]["rubrics"][0]["points"] = 7  # the publisher changed a criterion
    publisher.body = b"".join(json.dumps(r).encode() + b"\n" for r in rows)
    with pytest.raises(AssayError, match="not the one .* trusts .* --update-lock") as refused:
        fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path / "b", lock=lock)
    assert hashlib.sha256(publisher.body).hexdigest() not in str(refused.value)  # no paste-back
    assert not (tmp_path / "b" / "healthbench" / data_file("healthbench", "hard").name).exists()
    fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path / "b", lock=lock,
          update_lock=True)
    assert DataLock(lock).trusted("healthbench/hard")["sha256"] == hashlib.sha256(
        publisher.body).hexdigest()


def test_a_truncated_download_is_retried_and_never_used(publisher, tmp_path, lock):
    publisher.script = ["truncated", "truncated"]
    path = fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path, lock=lock)
    assert publisher.hits == 3 and path.read_bytes() == HARD


def test_a_corrupted_download_is_retried_against_the_locked_hash(publisher, tmp_path, lock):
    fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path / "a", lock=lock)
    publisher.script = ["corrupt", "corrupt"]
    path = fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path / "b", lock=lock)
    assert publisher.hits == 4 and path.read_bytes() == HARD


def test_a_download_that_never_matches_is_refused_and_nothing_is_left(publisher, tmp_path, lock):
    publisher.script = ["corrupt"] * 3
    with pytest.raises(AssayError, match="refused, nothing stored: its SHA-256 is not the "
                                         "--sha256 given"):
        fetch("healthbench", "hard", url=url(publisher), sha256=SHA, data_root=tmp_path,
              lock=lock)
    assert list((tmp_path / "healthbench").iterdir()) == [] and not lock.exists()
    with pytest.raises(ConfigError, match="assay data fetch healthbench"):
        local_copy("healthbench", "hard", data_root=tmp_path, lock=lock)


@pytest.mark.parametrize("subset", ["all", "hard", "consensus"])
def test_a_file_that_is_not_the_named_subset_is_refused(tmp_path, lock, subset):
    with pytest.raises(InputError, match=f"not the official {subset} file: it holds 60 rows, "
                                         "the official one"):
        fetch("healthbench", subset, source=DEV, data_root=tmp_path, lock=lock)
    assert not lock.exists()


def test_the_consensus_file_holds_consensus_criteria_only(tmp_path, lock):
    rows = list(standin_rows("consensus"))
    rows[5]["rubrics"][1]["tags"] = ["level:example", "axis:accuracy"]
    source = tmp_path / "consensus.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r":6: rubrics\[1\].tags: not a consensus criterion"):
        fetch("healthbench", "consensus", source=source, data_root=tmp_path, lock=lock)
    write_standin("consensus", source)
    assert fetch("healthbench", "consensus", source=source, data_root=tmp_path, lock=lock)


def test_repeated_ids_and_rows_that_are_not_healthbench_are_named_by_line(tmp_path, lock):
    rows = list(standin_rows("hard"))
    rows[9]["prompt_id"] = rows[2]["prompt_id"]
    del rows[20]["rubrics"]
    source = tmp_path / "hard.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as refused:
        fetch("healthbench", "hard", source=source, data_root=tmp_path, lock=lock)
    message = str(refused.value)
    assert ":10: prompt_id: 'standin-00002' again (first on line 3)" in message
    assert ":21: rubrics:" in message


def test_a_stored_file_changed_afterwards_is_refused(publisher, tmp_path, lock):
    path = fetch("healthbench", "hard", url=url(publisher), data_root=tmp_path, lock=lock)
    path.write_bytes(HARD + b"\n")
    with pytest.raises(ConfigError, match="changed since it was fetched"):
        local_copy("healthbench", "hard", data_root=tmp_path, lock=lock)


def test_a_stored_file_the_lock_does_not_trust_is_refused(tmp_path, lock):
    source = write_standin("hard", tmp_path / "hard.jsonl")
    fetch("healthbench", "hard", source=source, data_root=tmp_path / "d", lock=lock)
    DataLock(lock).record("healthbench/hard", "0" * 64, name="x", rows=1000)
    with pytest.raises(ConfigError, match="not the file .* trusts"):
        local_copy("healthbench", "hard", data_root=tmp_path / "d", lock=lock)


def test_one_fetch_stores_every_subset_eval_reads(tmp_path):
    """`assay data fetch healthbench` (no --subset) stores all, hard and consensus, each checked
    and locked (here from stand-ins on a local mirror of the publisher's directory)."""
    import functools

    blob = tmp_path / "blob"
    blob.mkdir()
    files = {s: write_standin(s, blob / data_file("healthbench", s).name)
             for s in ("all", "hard", "consensus")}
    handler = functools.partial(type("Quiet", (http.server.SimpleHTTPRequestHandler,), {
        "log_message": lambda *a: None}), directory=str(blob))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = subprocess.run(
            [*ASSAY, "data", "fetch", "healthbench", "--data-dir", str(tmp_path / "data"),
             "--mirror", f"http://127.0.0.1:{server.server_address[1]}"],
            capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("trusted on first use") == 3
    assert set(json.loads((tmp_path / "assay-data.lock").read_text())["files"]) == {
        "healthbench/all", "healthbench/hard", "healthbench/consensus"}
    for subset, source in files.items():
        assert local_copy("healthbench", subset, data_root=tmp_path / "data",
                          lock=tmp_path / "assay-data.lock").read_bytes() == source.read_bytes()


async def test_eval_healthbench_hard_reads_the_fetched_copy(serve, tmp_path, lock, monkeypatch):
    from assay.evaluation import aevaluate
    from assay.testing import ModelScript

    monkeypatch.chdir(tmp_path)
    source = write_standin("hard", tmp_path / "hard.jsonl")
    fetch("healthbench", "hard", source=source, data_root=tmp_path / "d")
    server = await serve(models={"bot": ModelScript()})
    result = await aevaluate("healthbench", subset="hard", data_root=tmp_path / "d",
                             examples=2, run_dir=tmp_path / "ev",
                             model=f"openai-compatible:bot@{server.base_url}",
                             judges=[f"openai-compatible:fake@{server.base_url}"])
    assert result.stage == "done" and result.metrics["overall_score:n_samples"] == 2
    assert result.settings["healthbench"] is True
