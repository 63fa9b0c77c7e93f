"""``assay judges check`` against the real server: one request, answered or named."""

from __future__ import annotations

import pytest

from .outcomes import assay

pytestmark = pytest.mark.real_server


def test_judges_check_reaches_the_server(llama, tmp_path, outcome):
    done = assay("judges", "check", llama.spec, cwd=tmp_path, ok_codes=(0,))
    outcome({"slots": llama.props()["total_slots"]})
    assert llama.model in done.stdout + done.stderr
