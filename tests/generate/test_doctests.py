"""The runnable examples in the generation docstrings stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["templates", "board", "rules", "retrieval", "queries", "baselines", "estimate"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"assay.generate.{name}")
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
