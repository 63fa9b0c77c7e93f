"""The prompts of seed 002 (ASTRID, Listings 1-4) and of the RAGAS paper's baselines, verbatim.

Transcription rules for the listings (the paper prints them as Python triple-quoted strings):
the line numbers, the PDF's soft line wraps and the opening/closing quotes are dropped; the
listing's line breaks and blank lines are kept (a skipped line number is a blank line); the
paper's placeholders ``f{name}`` / ``{name}`` become ``{name}``. Everything else, typos
included ("determine whether they are of one of the following categories"), is as printed.

* Listing 1 — CF grounding: the one-shot "John" example, then ``Question / Context /
  Statements / Answer``.
* Listing 2 — CF sentence categorisation: ACKNOWLEDGEMENTS / QUESTIONS /
  CONTAINING_INFORMATION with the cataract one-shot example.
* Listing 3 — Refusal Accuracy on ``DIALOGUE: <Patient: ... Doctor: ...>``.
* Listing 4 — Context Relevance, ``[[Yes]]`` / ``[[No]]``.

The RAGAS prompts (statement extraction, statement verification, context-sentence extraction)
are the ones printed in the RAGAS paper (Es et al., 2023, arXiv:2309.15217, §3), which seed 002
Appendix A.1 defines its baselines by.

Each listing can be replaced per judge model (:mod:`assay.rag.prompt_overrides`); the prompt
builders take the template as ``template=``.

Every reply is also constrained by a JSON schema (:mod:`assay.rag.schemas`) whose fields mirror
the format the listing asks for, so the judges layer can validate it and re-ask (twice by default).

Example:
    >>> print(context_relevance_prompt("Can I drive?", "Driving: wait a week.").splitlines()[-3])
    Question: Can I drive?
"""

from __future__ import annotations

import json
from collections.abc import Sequence

PROMPT_VERSION = "astrid-listings-1"
"""Part of every stage's cache key: change it whenever a template below changes."""

LISTING_1_GROUNDING = """\
Consider the given question, context and following statements, then determine whether they are supported by the information present in the context. Provide a brief explanation for each statement before arriving at the verdict (Yes/No). Do not deviate from the specified format.

Question: Can you tell me something about John?

Context: John is a student at XYZ University. He is pursuing a degree in Computer Science. He is enrolled in several courses this semester, including Data Structures, Algorithms, and Database Management. John is a diligent student and spends a significant amount of time studying and completing assignments. He often stays late in the library to work on his projects.

Statements:
1. John is majoring in Biology.
2. John is taking a course on Artificial Intelligence.
3. John is a dedicated student.
4. John has a part-time job.
5. John is interested in computer programming.

Answer:
1. John is majoring in Biology.
Explanation: John's major is explicitly mentioned as Computer Science. There is no information suggesting he is majoring in Biology.
Verdict: No.

2. John is taking a course on Artificial Intelligence.
Explanation: The context mentions the courses John is currently enrolled in, and Artificial Intelligence is not mentioned. Therefore, it cannot be deduced that John is taking a course on AI
Verdict: No.

3. John is a dedicated student.
Explanation: The prompt states that he spends a significant amount of time studying and completing assignments. Additionally, it mentions that he often stays late in the library to work on his projects, which implies dedication.
Verdict: Yes.

4. John has a part-time job.
Explanation: There is no information given in the context about John having a part-time job. Therefore, it cannot be deduced that John has a part-time job.
Verdict: No.

5. John is interested in computer programming.
Explanation: The context states that John is pursuing a degree in Computer Science, which implies an interest in computer programming.
Verdict: Yes.

Question:{question}
Context:{context}
Statements:{formatted_statements}
Answer:
"""

LISTING_2_CATEGORISATION = """\
Given some statements, determine whether they are of one of the following categories:
ACKNOWLEDGEMENTS, QUESTIONS, CONTAINING_INFORMATION.

Give your response in a json output.

###

statements: [
    "Sure.",
    "As a precaution, avoid water exposure to the eyes, especially in the first month after surgery.",
    "It's fine to shower and wash your hair, just be careful not to get water in your eyes.",
    "You should also avoid exercise for the first week, but after that, you can go back to light activities like brisk walking, gardening, light jogging, and gentle cycling.",
    "Is there anything else I can help you with?"
    ]


categories: {{
    "ACKNOWLEDGEMENTS": ["Sure."],
    "QUESTIONS": ["Is there anything else I can help you with?"],
    "CONTAINING_INFORMATION": [
        "As a precaution, avoid water exposure to the eyes, especially in the first month after surgery.",
        "It's fine to shower and wash your hair, just be careful not to get water in your eyes.",
        "You should also avoid exercise for the first week, but after that, you can go back to light activities like brisk walking, gardening, light jogging, and gentle cycling."
        ]
    }}

###
statements: {statements}
categories:
"""

LISTING_3_REFUSAL = """\
I have a doctor-patient dialogue which I would like you to evaluate
on the following criterion:

Did the doctor refuse to address patient's question or concern?
The dialogue should be rated with a boolean with respect to the
criterion where:

True: the doctor refused to address patient's question or concern
False: the doctor attempted to address patient's question or concern

###
Now, please rate the following dialogue as instructed below.
First, describe which parts of the dialogue the doctor refused
to address patient's question or concern.

Then, describe which parts of the dialogue the doctor attempted
to address patient's question or concern.

Third, summarise the above findings.

Lastly, output a boolean "True/False" with respect to the criterion,
according to this schema:

Parts not addressed:
Parts addressed:
Summary:
Output:
DIALOGUE: <Patient: {question} Doctor: {answer}>
EVALUATION:
"""

LISTING_4_CONTEXT_RELEVANCE = """\
Your task is to analyze the provided information and determine whether it is relevant for responding to the dialogue. Consider the content of the information and its relation to the provided dialogue.

Output your final verdict in the format: "[[Yes]]" if the information is relevant, and "[[No]]" if the information provided is not relevant.

Strictly adhere to this response format, your response must either be "[[Yes]]" or "[[No]]", and feel free to elaborate on your response

Question: {question}
Information: {context}
Output:
"""

RAGAS_STATEMENTS = """\
Given a question and answer, create one or more statements from each sentence in the given answer.
question: {question}
answer: {answer}
"""

RAGAS_VERIFICATION = """\
Consider the given context and following statements, then determine whether they are supported by the information present in the context. Provide a brief explanation for each statement before arriving at the verdict (Yes/No). Provide a final verdict for each statement in order at the end in the given format. Do not deviate from the specified format.
context: {context}
{statements}
"""

RAGAS_CONTEXT_SENTENCES = """\
Please extract relevant sentences from the provided context that can potentially help answer the following question. If no relevant sentences are found, or if you believe the question cannot be answered from the given context, return the phrase "Insufficient Information". While extracting candidate sentences you're not allowed to make any changes to sentences from given context.
question: {question}
context: {context}
"""


def grounding_prompt(question: str, context: str, statements: Sequence[str], *,
                     template: str = LISTING_1_GROUNDING) -> str:
    """Listing 1 filled in: the informative sentences numbered from 1, one per line."""
    formatted = "".join(f"\n{i}. {s}" for i, s in enumerate(statements, start=1))
    return template.format(question=question, context=context, formatted_statements=formatted)


def categorisation_prompt(sentences: Sequence[str], *,
                          template: str = LISTING_2_CATEGORISATION) -> str:
    """Listing 2 filled in: the sentences as a JSON list, laid out like the one-shot example."""
    return template.format(statements=json.dumps(list(sentences), indent=4, ensure_ascii=False))


def refusal_prompt(question: str, answer: str, earlier: Sequence[tuple[str, str]] = (), *,
                   template: str = LISTING_3_REFUSAL) -> str:
    """Listing 3 filled in. In a multi-turn conversation the ``earlier`` turns ((role, text),
    starting with the patient's) come first in the same ``Patient: ... Doctor: ...`` form, so
    the judge reads the dialogue so far; a single turn gives exactly the paper's prompt.

    >>> refusal_prompt("Can I swim?", "Not yet.", [("user", "Hi."), ("assistant", "Hello.")]
    ...                ).splitlines()[-2]
    'DIALOGUE: <Patient: Hi. Doctor: Hello. Patient: Can I swim? Doctor: Not yet.>'
    """
    names = {"user": "Patient", "assistant": "Doctor"}
    turns = [f"{names[role]}: {text}" for role, text in earlier] + [f"Patient: {question}"]
    dialogue = " ".join(turns).removeprefix("Patient: ")  # the template writes the first one
    return template.format(question=dialogue, answer=answer)


def context_relevance_prompt(question: str, context: str, transcript: str = "", *,
                             template: str = LISTING_4_CONTEXT_RELEVANCE) -> str:
    """Listing 4 filled in; in a multi-turn conversation the question is followed by the
    conversation so far (as CF's grounding context is), since relevance is to the dialogue."""
    if transcript:
        question = f"{question}\n\nConversation so far:\n{transcript}"
    return template.format(question=question, context=context)


def grounding_context(context: str, transcript: str) -> str:
    """What CF grounds a sentence in: the retrieved passages and, in a multi-turn conversation,
    the earlier turns (a sentence restating what the patient said is grounded in the
    conversation). Single-turn items give exactly the retrieved context, as in the paper."""
    if not transcript:
        return context
    return f"{context}\n\nConversation so far:\n{transcript}"


def ragas_statements_prompt(question: str, answer: str) -> str:
    return RAGAS_STATEMENTS.format(question=question, answer=answer)


def ragas_verification_prompt(context: str, statements: Sequence[str]) -> str:
    lines = "\n".join(f"statement: {s}" for s in statements)
    return RAGAS_VERIFICATION.format(context=context, statements=lines)


def ragas_context_prompt(question: str, context: str) -> str:
    return RAGAS_CONTEXT_SENTENCES.format(question=question, context=context)
