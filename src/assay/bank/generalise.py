"""From instance criteria to general ones, without a model: what the bank builder clusters and
writes when no ``--distil`` judge is given.

A HealthBench criterion is written for one conversation: "Advises urgent referral if pneumonia
is getting severe, such as fast breathing (more than 30 breaths per minute). (Justification:
...)". Embedded as it is, it sits near the other criteria of its conversation (pneumonia) rather
than near the criteria that check the same thing elsewhere (urgent referral), and as a bank
criterion it grades one conversation only. Two steps make it general:

* :func:`without_instance_details`: its first sentence, without the justification, the
  parentheses and the list of examples ("such as ...", "e.g. ...", "including ...", a colon's
  enumeration): "Advises urgent referral if pneumonia is getting severe.". The builder embeds
  and clusters these texts, so clusters gather one kind of check across conversations.
* :func:`as_criterion`: the cluster's representative written as a criterion that stands on its
  own, with its subject ("The response advises urgent referral ..."), as the paper's 29 are
  ("The response should ...", "Response ...", "Answer ...").

Which clusters make the bank: those that recur across the most conversations, weighted by how
general their criterion's words are (:class:`Generality`: the share of its words that occur in
the criteria of at least 5% of the conversations, and of 3 at least). Across a few dozen
conversations a topic recurs too ("begin CPR", "postpartum haemorrhage"), and the weight keeps
"The response lists other consultation options." ahead of them.

HealthBench's consensus criteria (``level:cluster``, the "Step 1: Does the response ..."
templates shared by thousands of conversations) are another matter: they are general already,
and kept they would fill the bank with HealthBench's own templates. :func:`is_template` finds
them; the builder leaves them out before clustering.

Example:
    >>> text = ("Advises urgent referral if pneumonia is getting severe, such as fast breathing "
    ...         "(more than 30 breaths per minute). (Justification: a sign of severity.)")
    >>> without_instance_details(text)
    'Advises urgent referral if pneumonia is getting severe.'
    >>> as_criterion(without_instance_details(text))
    'The response advises urgent referral if pneumonia is getting severe.'
    >>> without_instance_details("Suggests that underlying conditions, such as anaemia, may "
    ...                          "cause the chills.")
    'Suggests that underlying conditions, such as anaemia, may cause the chills.'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from assay.bank.sources import SourceCriterion

_JUSTIFICATION = re.compile(r"\(?\s*justification\s*:.*$", re.IGNORECASE | re.DOTALL)
_BRACKETED = re.compile(r"\s*(?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\"'’”])[.!?](?=\s|$)")
_EXAMPLES = re.compile(r"[,;:—–]?\s+\b(?:such as|e\.g\.|eg\.|for example|for instance|"
                       r"including|i\.e\.|especially|particularly)(?=\W).*$",
                       re.IGNORECASE | re.DOTALL)
_SUBJECT = re.compile(r"^(?:the\s+)?(?:response|answer|assistant|model|completion)\b",
                      re.IGNORECASE)
# a criterion that starts with its verb: "Advises", "Clearly explains", "Should not", "Is"
_VERB_LIKE = re.compile(r"^(?:[A-Z][a-z]+ly\s+[a-z]+s|[A-Z][a-z]+s|Should|Must|Can|May|Is|Will)\b")
# a cut that ends inside a clause ("Suggests that underlying conditions[, such as ..., may
# cause it]") would say something else: the examples stay
_OPEN_CLAUSE = re.compile(r"\b(?:that|which|who|whether|if|when|because)(?:\s+\S+){0,3}\s*$"
                          r"|\b(?:the|a|an|of|to|for|with|and|or|as|by|from|than|about)\s*$",
                          re.IGNORECASE)
MIN_WORDS = 3  # a cut that would leave fewer words keeps the longer text


def is_template(source: SourceCriterion) -> bool:
    """A HealthBench consensus criterion: tagged ``level:cluster`` where it occurs.

    >>> is_template(SourceCriterion("Step 1: Does the response ...", [5], levels=["cluster"]))
    True
    """
    return "cluster" in source.levels


def without_instance_details(text: str) -> str:
    """The criterion's first sentence without its justification, bracketed asides and the
    examples it lists (see the module docstring); the text itself (spaces folded) when a cut
    would leave fewer than three words."""
    flat = " ".join(text.split())
    out = _JUSTIFICATION.sub("", flat)
    out = _BRACKETED.sub("", out).strip()
    end = _SENTENCE_END.search(out)
    if end is not None and len(out[:end.start()].split()) >= MIN_WORDS:
        out = out[:end.start()]
    cut = _EXAMPLES.sub("", out)
    if len(cut.split()) >= MIN_WORDS and not _OPEN_CLAUSE.search(cut):
        out = cut
    head, colon, _ = out.partition(": ")
    if colon and len(head.split()) >= 4:
        out = head
    out = out.strip().rstrip(",;:—– ").strip()
    return (out + ".") if len(out.split()) >= MIN_WORDS else flat


def as_criterion(text: str) -> str:
    """``text`` with its subject, when it starts with a verb as HealthBench's criteria do
    ("Advises ..." → "The response advises ..."); otherwise unchanged.

    >>> as_criterion("Fails to ask about allergies.")
    'The response fails to ask about allergies.'
    >>> as_criterion("If the user is pregnant, advises against ibuprofen.")
    'If the user is pregnant, advises against ibuprofen.'
    >>> as_criterion("Response uses plain language.")
    'Response uses plain language.'
    """
    if _SUBJECT.match(text) or not _VERB_LIKE.match(text):
        return text
    first, _, rest = text.partition(" ")
    return f"The response {first.lower()} {rest}".rstrip()


_WORD = re.compile(r"[a-z][a-z'’-]*|\d+(?:\.\d+)?")
COMMON_SHARE = 0.05
COMMON_FLOOR = 3


class Generality:
    """How general a criterion's words are, by the conversations of ``sources`` whose criteria
    use them: a word is common when at least ``share`` of the conversations (and ``floor``)
    use it.

    >>> sources = [SourceCriterion(f"Advises rest for {w}.", [1], prompt_ids=[f"p{i}"])
    ...            for i, w in enumerate(["flu", "gout", "a cold", "colic"])]
    >>> Generality(sources).of("The response advises rest for gout.")  # all but "gout"
    0.8333
    """

    def __init__(self, sources: Sequence[SourceCriterion], *, share: float = COMMON_SHARE,
                 floor: int = COMMON_FLOOR):
        words_of: dict[str, set[str]] = {}
        for source in sources:
            words = set(_WORD.findall(source.text.lower()))
            for prompt in set(source.prompt_ids):
                words_of.setdefault(prompt, set()).update(words)
        self.conversations = Counter(w for words in words_of.values() for w in words)
        self.threshold = max(floor, share * len(words_of))

    def of(self, text: str) -> float:
        """The share of ``text``'s words that are common (1.0 for a text without words);
        the words of the subject written by :func:`as_criterion` count as common."""
        words = _WORD.findall(text.lower())
        if not words:
            return 1.0
        common = sum(self.conversations[w] >= self.threshold or w in ("the", "response")
                     for w in words)
        return round(common / len(words), 4)
