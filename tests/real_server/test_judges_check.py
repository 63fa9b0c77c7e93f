"""``assay judges check`` against the real server: it answers, and what llama.cpp's ``/props``
says (context per request, parallel slots) is reported and sets the requests in flight."""

from __future__ import annotations

import pytest

from .outcomes import assay

pytestmark = pytest.mark.real_server


def test_judges_check_reports_the_servers_context_and_slots(llama, tmp_path, outcome):
    props = llama.props()
    context, slots = props["default_generation_settings"]["n_ctx"], props["total_slots"]
    done = assay("judges", "check", llama.spec, cwd=tmp_path, ok_codes=(0,))
    outcome({"context": context, "slots": slots})
    assert f"context {context:,} tokens, {slots} parallel slots" in done.stdout
    assert f"{slots} requests in flight" in done.stdout
