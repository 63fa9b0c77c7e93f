"""The run's label store: validated writes, history, several writers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assay.errors import InputError
from assay.review import RunLabels


def test_a_label_is_one_of_verdict_or_option(tmp_path):
    with RunLabels.open(tmp_path) as labels:
        with pytest.raises(InputError, match="exactly one of verdict"):
            labels.put("q1", "c", "dr_a")
        with pytest.raises(InputError, match="label"):
            labels.put("q1", "c", "dr_a", verdict="MAYBE")


def test_a_new_label_replaces_the_raters_old_one_and_history_keeps_both(tmp_path):
    with RunLabels.open(tmp_path) as labels:
        labels.put("q1", "c", "dr_a", verdict="MET")
        labels.put("q1", "c", "dr_a", verdict="UNMET", note="on reflection")
        assert [(v.decision.value, v.explanation) for v in labels.verdicts()] == [("UNMET", "on reflection")]
        assert labels.history_count() == 2


def test_concurrent_reviewers_in_separate_processes_lose_no_label(tmp_path):
    script = ("import sys; from assay.review import RunLabels\n"
              "labels = RunLabels.open(sys.argv[1])\n"
              "for i in range(60): labels.put(f'q{i}', 'c', sys.argv[2], verdict='MET')\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"dr_{n}"]) for n in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    with RunLabels.open(tmp_path) as labels:
        assert len(labels.labels()) == 240
