"""RAG conversation items: reading, the single-turn shorthand, and located errors."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.rag.items import HAZARD_CONTEXTS, RagItem, read_rag_items


def write(tmp_path, *lines):
    path = tmp_path / "rag.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_single_turn_shorthand_becomes_a_two_turn_conversation():
    item = RagItem.model_validate({"id": "a", "scope": "in_scope", "question": "q?",
                                   "answer": "A.", "context": "one passage"})
    assert [(t.role, t.content, t.context) for t in item.conversation] == [
        ("user", "q?", []), ("assistant", "A.", ["one passage"])]


def test_a_multi_turn_exchange_carries_the_earlier_turns_as_history():
    item = RagItem.model_validate({"id": "a", "scope": "in_scope", "conversation": [
        {"role": "user", "content": "I had surgery on Monday."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Can I wash my hair?"},
        {"role": "assistant", "content": "Yes.", "context": ["p1", "p2"]}]})
    exchange = item.exchange(3)
    assert exchange.question == "Can I wash my hair?" and exchange.context == "p1\n\np2"
    assert exchange.transcript() == "Patient: I had surgery on Monday.\nAssistant: Noted."
    assert item.graded_turns("all") == [1, 3] and item.graded_turns("last") == [3]


def test_refusal_is_expected_out_of_scope_unless_the_item_says_otherwise():
    base = {"id": "a", "question": "q", "answer": "a"}
    assert RagItem.model_validate({**base, "scope": "out_of_scope"}).refusal_expected
    assert not RagItem.model_validate({**base, "scope": "in_scope"}).refusal_expected
    assert not RagItem.model_validate({**base, "scope": "out_of_scope",
                                       "should_refuse": False}).refusal_expected


def test_bad_lines_are_all_reported_with_file_line_and_field(tmp_path):
    path = write(tmp_path,
                 '{"id": "a", "scope": "in_scope", "question": "q", "answer": "a"}',
                 '{"id": "b", "scope": "maybe", "question": "q", "answer": "a"}',
                 '{"id": "c", "scope": "in_scope", "conversation": [{"role": "user", '
                 '"content": "q", "context": ["x"]}, {"role": "assistant", "content": "a"}]}',
                 '{"id": "a", "scope": "in_scope", "question": "q", "answer": "a"}',
                 '{"id": "d", "scope": "in_scope", "question": "q", "answer": "a", '
                 '"labels": {"cf": 1.5}}',
                 '{"id": "e", "scope": "in_scope", "question": "q", "answer": "a",,}')
    with pytest.raises(InputError) as caught:
        read_rag_items(path)
    lines = [str(i) for i in caught.value.issues]
    assert lines[0].endswith("rag.jsonl:2: scope: unknown scope \"maybe\", expected "
                             "'in_scope' or 'out_of_scope'")
    assert lines[1].endswith("rag.jsonl:3: conversation[0].context: only assistant turns carry "
                             "retrieved context")
    assert lines[2].endswith("rag.jsonl:4: id: duplicate id 'a' (first on line 1)")
    assert lines[3].startswith(str(path) + ":5: labels.cf:")
    assert lines[4].startswith(str(path) + ":6: malformed JSON")


def test_a_conversation_must_end_with_the_answer_being_graded(tmp_path):
    path = write(tmp_path, '{"id": "a", "scope": "in_scope", "conversation": [{"role": "user", '
                           '"content": "q"}, {"role": "assistant", "content": "a"}, '
                           '{"role": "user", "content": "and?"}]}')
    with pytest.raises(InputError, match=r"rag.jsonl:1: conversation\[2\].role: the conversation "
                                         "must end with the assistant's answer"):
        read_rag_items(path)


def test_the_shipped_sample_covers_every_hazard_context_of_section_5(sample_items):
    assert {i.hazard for i in sample_items} >= set(HAZARD_CONTEXTS)
