"""Judge specs, presets, assay.toml tables, keys and the preflight check."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError, InputError
from assay.judges import PRESETS, load_judge_configs, make_judge, parse_spec


def test_openai_spec_uses_the_openai_url_and_key_variable():
    cfg = parse_spec("openai:gpt-4.1-mini")
    assert (cfg.base_url, cfg.api_key_env, cfg.wire) == (
        "https://api.openai.com/v1", "OPENAI_API_KEY", "openai")


def test_anthropic_spec_speaks_the_native_messages_api():
    cfg = parse_spec("anthropic:claude-sonnet-4-5")
    # no max_tokens of its own: each call sends its stage's budget (the Messages API needs one)
    assert (cfg.wire, cfg.auth, cfg.max_tokens) == ("anthropic", "x-api-key", None)


def test_a_url_after_at_overrides_the_preset_url():
    assert parse_spec("groq:llama-3.3@http://10.0.0.2:9000/v1/").base_url == "http://10.0.0.2:9000/v1"


def test_model_names_may_contain_colons():
    assert parse_spec("ollama:llama3.1:8b").model == "llama3.1:8b"


def test_model_names_may_contain_at_signs_that_are_not_urls():
    assert parse_spec("vllm:org/model@rev2").model == "org/model@rev2"


@pytest.mark.parametrize("name", ["vllm", "ollama", "llamacpp", "lmstudio", "openrouter", "together",
                                  "groq", "gemini"])
def test_every_preset_has_a_base_url(name):
    assert parse_spec(f"{name}:m").base_url == PRESETS[name].base_url


def test_an_unknown_provider_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError, match="unknown provider 'foo'; known: openai, anthropic"):
        make_judge("foo:bar")


def test_openai_compatible_needs_a_url():
    with pytest.raises(ConfigError, match="no base URL"):
        parse_spec("openai-compatible:m")


def test_azure_needs_a_resource_url(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(ConfigError, match="azure:DEPLOYMENT@https://"):
        parse_spec("azure:gpt-4o")


def test_azure_reads_the_endpoint_variable_and_uses_the_api_key_header(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com/")
    cfg = parse_spec("azure:gpt-4o")
    assert cfg.base_url == "https://res.openai.azure.com/openai/v1" and cfg.auth == "api-key"


def test_a_missing_key_is_a_config_error_naming_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set the environment variable OPENAI_API_KEY"):
        make_judge("openai:gpt-4.1-mini")


def test_a_loopback_endpoint_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert make_judge("openai:gpt-4.1-mini@http://127.0.0.1:8000/v1").config.is_loopback


def test_a_bare_name_is_looked_up_in_assay_toml(tmp_path, monkeypatch):
    (tmp_path / "assay.toml").write_text(
        '[judges.local]\nspec = "vllm:Qwen/Qwen3-8B"\nbase_url = "http://127.0.0.1:8001/v1"\n'
        'temperature = 0.0\nlimits = { max_in_flight = 8, rpm = 600 }\nheaders = { X-Team = "eval" }\n')
    monkeypatch.chdir(tmp_path)
    judge = make_judge("local")
    assert (judge.id, judge.config.base_url, judge.config.limits.max_in_flight) == (
        "local", "http://127.0.0.1:8001/v1", 8)
    assert judge.config.headers == {"X-Team": "eval"}


def test_a_named_judge_may_name_its_own_key_variable(tmp_path, monkeypatch):
    path = tmp_path / "judges.toml"
    path.write_text('[judges.box]\nspec = "openai-compatible:m@https://box.example/v1"\n'
                    'api_key_env = "BOX_KEY"\n')
    monkeypatch.delenv("BOX_KEY", raising=False)
    with pytest.raises(ConfigError, match="BOX_KEY"):
        make_judge("box", config_file=path)
    monkeypatch.setenv("BOX_KEY", "box-secret-1234")
    assert make_judge("box", config_file=path).id == "box"


def test_an_unknown_name_lists_the_defined_judges(tmp_path):
    path = tmp_path / "assay.toml"
    path.write_text('[judges.a]\nspec = "vllm:m"\n')
    with pytest.raises(ConfigError, match=r"no \[judges.b\] in .*defined: a"):
        make_judge("b", config_file=path)


def test_a_bad_field_in_assay_toml_names_file_line_and_field(tmp_path):
    path = tmp_path / "assay.toml"
    path.write_text('# judges\n\n[judges.a]\nspec = "vllm:m"\ntemprature = 0.2\n')
    with pytest.raises(InputError, match=r"assay.toml:3: judges.a: .*temprature"):
        load_judge_configs(path)


def test_a_judge_table_without_spec_is_reported(tmp_path):
    path = tmp_path / "assay.toml"
    path.write_text('[judges.a]\nmodel = "m"\n')
    with pytest.raises(InputError, match=r"assay.toml:1: judges.a.spec: missing judge spec"):
        load_judge_configs(path)


async def test_preflight_of_an_unreachable_url_is_a_config_error():
    async with make_judge("openai-compatible:m@http://127.0.0.1:9/v1") as judge:
        with pytest.raises(ConfigError, match="cannot reach http://127.0.0.1:9/v1"):
            await judge.check(timeout_s=2)


async def test_preflight_of_a_refused_key_is_a_config_error(serve, monkeypatch):
    server = await serve(require_key="right-key-123")
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key-456")
    async with make_judge(f"openai:m@{server.base_url}") as judge:
        with pytest.raises(ConfigError, match=r"refused the API key \(HTTP 401\)"):
            await judge.check()


async def test_preflight_of_a_working_endpoint_passes(serve):
    from assay.judges import check_judges

    server = await serve()
    async with make_judge(f"openai-compatible:m@{server.base_url}") as judge:
        await check_judges([judge])
    assert server.requests == []  # no model call was made
