"""A prompt that cannot fit a local server's context, found before it is sent.

Ollama's OpenAI endpoint cuts a prompt longer than the model's context and answers about what
is left, so the ``context_length`` failure a refusing server gives (llama.cpp, vLLM:
:mod:`assay.judges.context_overflow`) never comes and a cut conversation would be graded.
LM Studio is treated the same way (its API does not say what it does with an overflow). A
judge whose server said its context and that it cuts silently
(:attr:`~assay.judges.server_info.ServerInfo.cuts_silently`) estimates each prompt's tokens
(about 4 characters a token, the estimate of every budget in Assay) and:

* **refuses** a prompt estimated over the context: a ``context_length`` failure, never sent
  (never retried either: a larger context or a shorter prompt can help);
* **warns** (once per judge) when a prompt is sent whose estimate reaches 90% of the context
  (a token estimate can be that far off) or leaves no room for the reply's ``max_tokens``.

Servers that refuse a long prompt themselves answer it with their own exact count: nothing is
estimated for them.

Example:
    >>> from assay.judges.server_info import ServerInfo
    >>> ollama = ServerInfo(4096, None, "/api/ps", cuts_silently=True)
    >>> fit(ollama, prompt_tokens=5000, max_tokens=512).refuse
    True
    >>> fit(ollama, prompt_tokens=3800, max_tokens=512).refuse, fit(ollama, 1000, 512) is None
    (False, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.judges.server_info import ServerInfo

CLOSE = 0.9  # a prompt estimated at this share of the context may not fit: warn


@dataclass(frozen=True, slots=True)
class Fit:
    """A prompt that does not fit (``refuse``) or may not (a warning), and why."""

    refuse: bool
    message: str


def fit(server: ServerInfo | None, prompt_tokens: int, max_tokens: int | None) -> Fit | None:
    """Whether a prompt of about ``prompt_tokens`` tokens fits ``server``'s context (None: it
    fits, or the server refuses what does not fit itself, or said no context)."""
    if server is None or not server.cuts_silently or server.context_size is None:
        return None
    context = server.context_size
    what = (f"the prompt (about {prompt_tokens:,} tokens at 4 characters a token) and the "
            f"server's context of {context:,} tokens ({server.source})")
    advice = ("give the model a longer context (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; "
              "LM Studio: the context length it loads the model with) or shorten the prompt")
    if prompt_tokens > context:
        return Fit(True, f"{what}: the prompt cannot fit, and this server cuts a longer prompt "
                         f"silently instead of refusing it, so it was not sent; {advice}")
    if prompt_tokens >= CLOSE * context or prompt_tokens + (max_tokens or 0) > context:
        return Fit(False, f"{what}: the prompt may not fit with its reply "
                          f"(max_tokens {max_tokens or 0:,}), and this server cuts a longer "
                          f"prompt silently; {advice}")
    return None
