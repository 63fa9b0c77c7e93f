"""Issue 16: what an `assay grade` process pays besides its calls. A run served wholly from the
cache never loads the HTTP stack; the manifest's percentiles are NumPy's without NumPy; the
package versions are looked up once per process."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

from assay.cli import app
from assay.runs import manifest
from assay.testing import FakeJudgeServer

WARM_RUN = """
import atexit, sys
atexit.register(lambda: print("aiohttp loaded" if "aiohttp" in sys.modules else "aiohttp not loaded",
                              file=sys.stderr))
import assay.cli
sys.argv = ["assay", "grade", *sys.argv[1:]]
assay.cli.main()
"""


def test_a_run_served_from_the_cache_never_loads_the_http_client(
        tmp_path, items_file, rubric_file):
    cache = tmp_path / "cache.sqlite"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        judge = spec(server)
        cold = CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                        "--judge", judge, "--run-dir", str(tmp_path / "cold"),
                                        "--cache", str(cache), "--quiet"])
    assert cold.exit_code == 0, cold.output
    # the server is gone: the warm run must not even try to reach it
    warm = subprocess.run(
        [sys.executable, "-c", WARM_RUN, str(items_file), "--rubric", str(rubric_file),
         "--judge", judge, "--run-dir", str(tmp_path / "warm"), "--cache", str(cache), "--quiet"],
        check=False, capture_output=True, text=True, timeout=120)
    assert warm.returncode == 0, warm.stderr
    assert "aiohttp not loaded" in warm.stderr
    cold_manifest = json.loads((tmp_path / "cold" / "manifest.json").read_text())
    warm_manifest = json.loads((tmp_path / "warm" / "manifest.json").read_text())
    assert warm_manifest["totals"]["cache_hits"] == cold_manifest["totals"]["calls"] == 24
    assert warm_manifest["timing"]["call_latency_s"] is None  # every call came from the cache


@pytest.mark.parametrize("values", [
    [0.25], [3.0, 1.0], [4.0, 1.0, 3.0, 2.0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
    [0.013, 0.07, 0.05, 0.021, 0.5, 0.0499, 0.33, 0.051, 0.02, 0.7, 0.011, 1.9],
    [float(x) for x in np.random.default_rng(7).exponential(0.05, size=997)],
    [float(x) for x in np.random.default_rng(8).uniform(0, 3, size=64)],
])
def test_manifest_percentiles_equal_numpys_without_importing_it(values):
    got = manifest._percentiles(values)
    array = np.asarray(values, dtype=float)
    assert got["p50"] == float(np.percentile(array, 50))  # bit for bit
    assert got["p95"] == float(np.percentile(array, 95))
    assert got["max"] == float(array.max()) and got["n"] == len(values)
    assert got["mean"] == pytest.approx(float(array.mean()), rel=1e-12)
    assert manifest._percentiles([]) is None


def test_writing_a_manifest_does_not_import_numpy(tmp_path):
    code = ("import sys\n"
            "from assay.runs.manifest import write_manifest\n"
            "from assay.runs.store import RunStore\n"
            f"store = RunStore.create({str(tmp_path / 'run.sqlite')!r}, {{'grading': {{'seed': 3}}}})\n"
            "store.latencies = lambda: [0.3, 0.1, 0.2]  # as if three calls had been made\n"
            "m = write_manifest(store, status='complete', sessions=[{'wall_s': 1.0, 'calls_made': 3}])\n"
            "assert m['master_seed'] == 3 and m['packages']['assay'] == m['assay_version']\n"
            "assert m['timing']['call_latency_s']['p50'] == 0.2\n"
            "print('numpy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert json.loads((tmp_path / "manifest.json").read_text())["status"] == "complete"


def test_package_versions_are_looked_up_once_and_handed_out_as_copies(monkeypatch):
    manifest._package_versions.cache_clear()
    lookups: list[str] = []
    real = manifest.metadata.distribution  # each version is read from its distribution
    monkeypatch.setattr(manifest.metadata, "distribution",
                        lambda name: lookups.append(name) or real(name))
    first = manifest.package_versions()
    first["assay"] = "changed by a caller"
    second = manifest.package_versions()
    assert lookups == list(manifest.PACKAGES)  # each package once, for both calls
    assert second["assay"] != "changed by a caller" and second["python"] == first["python"]
    manifest._package_versions.cache_clear()

