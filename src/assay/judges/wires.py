"""The wire format of a judge config: how its requests are written and its replies read.

    >>> from assay.judges.specs import parse_spec
    >>> type(wire_for(parse_spec("anthropic:claude-sonnet-4-5"))).__name__
    'AnthropicWire'
"""

from __future__ import annotations

from assay.judges.anthropic import AnthropicWire
from assay.judges.config import JudgeConfig
from assay.judges.openai_compat import OpenAIWire
from assay.judges.responses_wire import OpenAIResponsesWire


def wire_for(config: JudgeConfig) -> OpenAIWire | AnthropicWire:
    """The chat-completions wire (OpenAI and every compatible server), Anthropic's Messages
    API, or OpenAI's Responses API (``wire = "openai-responses"``)."""
    if config.wire == "anthropic":
        return AnthropicWire()
    return OpenAIResponsesWire() if config.wire == "openai-responses" else OpenAIWire()
