"""The runnable examples in the rubric_eval docstrings stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["released", "stats", "prompts", "cia", "perturb", "pair_judge", "refine"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"assay.rubric_eval.{name}")
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
