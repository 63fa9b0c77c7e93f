"""Each `assay serve --replicas` is its own Serve app: a name is never taken twice."""

from __future__ import annotations

import pytest

from assay.distributed.serve import app_name, own_path
from assay.errors import ConfigError


def test_the_first_free_default_name_is_picked():
    assert app_name(None, set()) == "assay-serve"
    assert app_name(None, {"assay-serve", "assay-serve-2", "other"}) == "assay-serve-3"


def test_an_app_name_already_deployed_is_refused_not_replaced():
    with pytest.raises(ConfigError, match="already deployed on this cluster"):
        app_name("rm-a", {"rm-a"})


@pytest.mark.parametrize("name", ["", "/x", "a b", "../up", "x" * 65])
def test_an_app_name_that_cannot_be_a_url_prefix_is_refused(name):
    with pytest.raises(ConfigError, match="--app-name"):
        app_name(name, set())


def test_a_replica_sees_paths_below_its_route_prefix():
    scope = {"path": "/assay-serve-2/get_reward", "root_path": "/assay-serve-2"}
    assert own_path(scope) == "/get_reward"
    assert own_path({"path": "/assay-serve-22/x", "root_path": "/assay-serve-2"}) == \
        "/assay-serve-22/x"
