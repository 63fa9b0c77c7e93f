"""The runnable examples in the evidence docstrings stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["documents", "chunking", "fusion", "kb", "tokens"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"assay.evidence.{name}")
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
