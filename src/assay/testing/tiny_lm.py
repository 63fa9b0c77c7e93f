"""A tiny causal language model and its tokenizer, built on the spot, to run a real trainer
offline (TRL's ``GRPOTrainer`` in the RL example and test): random weights from a small
``LlamaConfig`` and a word-level tokenizer over a fixed vocabulary, nothing downloaded.

Needs ``torch`` and ``transformers`` (the ``rl`` extra). The same ``seed`` gives the same
weights, so a run that samples with a seeded trainer is reproducible.

Example::

    model, tokenizer = tiny_causal_lm(seed=0)
    tokenizer("rest and see a doctor")["input_ids"]     # one id per word
    model.num_parameters()                               # a few thousand
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[BOS]", "[EOS]")

#: Words the tiny model can say: enough of the reward criteria's keywords that random
#: completions sometimes meet a criterion, so rewards differ within a GRPO group.
HEALTH_WORDS = (
    "rest", "and", "fluids", "see", "a", "doctor", "double", "the", "dose", "call",
    "emergency", "services", "drink", "water", "sleep", "take", "it", "slowly", "I",
    "have", "had", "cold", "for", "three", "days", "what", "should", "do", "?", "my",
    "chest", "hurts", "when", "climb", "stairs", "headache", "week", "now", "today", "wait",
)


def word_tokenizer(words: Sequence[str] = HEALTH_WORDS) -> Any:
    """A ``PreTrainedTokenizerFast`` over ``words`` (split on whitespace and punctuation,
    unknown words to ``[UNK]``), padding on the left as generation needs; decoding joins
    the words with spaces."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(dict.fromkeys((*SPECIAL_TOKENS, *words)))}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]",
                                   bos_token="[BOS]", eos_token="[EOS]", padding_side="left")


def tiny_causal_lm(seed: int = 0, words: Sequence[str] = HEALTH_WORDS,
                   hidden_size: int = 16) -> tuple[Any, Any]:
    """``(model, tokenizer)``: a one-layer Llama with random weights drawn under ``seed``
    and :func:`word_tokenizer` over ``words``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = word_tokenizer(words)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size,
                         intermediate_size=2 * hidden_size, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         tie_word_embeddings=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model, tokenizer
