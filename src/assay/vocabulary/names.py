"""Lab and wearable names as systems write them, reduced to the forms a vocabulary may list.

Lab reports invert names around commas ("Glucose, Fasting", "Vitamin D, 25-Hydroxy, Total"),
add the specimen ("Creatinine, Serum"), the method or equation ("eGFR CKD-EPI 2021", "TSH, 3rd
generation", "LDL Chol Calc (NIH)") and calculated-value tags; apps add the period ("Daily
resting heart rate", "Overnight HRV", "Avg SpO2"). :func:`forms` lists the forms to look up,
most literal first: the name itself, its parts in and out of parentheses, each comma-inverted
order, then each of those without the qualifier words of its kind. Only words that never change
the analyte are qualifiers: "urine" is not one ("Creatinine, Urine" is not serum creatinine), nor
"free" or "direct" where a vocabulary lists the variant ("T4, Free"; "Bilirubin, Direct" is looked
up whole first).

Example:
    >>> forms("lab", "Glucose, Fasting")[:3]
    ['glucose fasting', 'fasting glucose', 'glucose']
    >>> "ldl chol" in forms("lab", "LDL Chol Calc (NIH)")
    True
    >>> forms("wearable", "Overnight HRV")[-1]
    'hrv'
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Words that qualify how or where an analyte was measured, never which analyte it is. The weak
# ones also begin names ("high-density lipoprotein", "total cholesterol"), so they are dropped
# only after the strong ones alone have been tried.
_LAB_STRONG = frozenset({
    "serum", "plasma", "ser", "plas", "serpl", "bld", "whole", "venous", "capillary",
    "arterial", "specimen", "sample", "ser/plas", "level", "levels", "result", "results",
    "value", "test", "assay", "screen", "panel", "quant", "quantitative", "qn", "lab",
    "measured", "measurement", "concentration", "conc", "mcnc", "scnc", "acnc", "mfr", "calc",
    "calculated", "calculation", "computed", "derived", "est", "estimated", "nih", "martin",
    "hopkins", "friedewald", "sampson", "formula", "equation", "ckd", "epi", "ckdepi", "mdrd",
    "cockcroft", "gault", "2009", "2012", "2021", "race", "if", "nonafricn", "africn",
    "african", "american", "am", "black", "nonblack", "afr", "amer", "3rd", "third", "4th",
    "fourth", "generation", "gen", "ultrasensitive", "hplc", "ifcc", "ngsp", "dcct",
    "immunoassay", "ia", "lc", "ms", "lcms", "chemiluminescent", "ecl", "eclia", "ria",
    "fasting", "fast", "fasted", "nonfasting", "random", "rand", "postprandial", "pp",
    "cardiac", "direct", "poc", "point", "care", "bedside",
})
_LAB_WEAK = frozenset({
    "high", "hs", "sensitive", "sensitivity", "ultra", "total", "tot", "non", "free", "in",
    "of", "by", "or", "the", "and", "s", "p", "sp",
})
_WEARABLE_STRONG = frozenset({
    "daily", "day", "today", "nightly", "night", "overnight", "sleeping", "avg", "average",
    "mean", "median", "latest", "current", "last", "recent", "7", "14", "30", "week",
    "weekly", "monthly", "trend", "rolling", "reading", "value", "level", "measured", "apple",
    "health", "fitbit", "garmin", "oura", "whoop", "watch", "ring", "band", "tracker",
})
_STRIPPED = {"lab": (_LAB_STRONG, _LAB_STRONG | _LAB_WEAK), "wearable": (_WEARABLE_STRONG,)}
# "average glucose" and "daily steps" are names themselves: forms keep the literal one first.
_TOKEN = re.compile(r"[a-z0-9%]+|[^\x00-\x7f\s]")


def forms(kind: str, name: str) -> list[str]:
    """The forms of ``name`` to look up, most literal first (see the module docstring)."""
    return list(_forms(kind, name))


@functools.lru_cache(maxsize=16384)
def _forms(kind: str, name: str) -> tuple[str, ...]:
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    inside = [p.strip() for p in re.findall(r"\(([^)]*)\)", text) if p.strip()]
    text = re.sub(r"\[[^\]]*\]", " ", text)  # LOINC's [Mass/volume] and the like
    outside = re.sub(r"\([^)]*\)", " ", text)
    literal: list[str] = [text, outside, *inside]
    parts = [p.strip() for p in outside.split(",") if p.strip()]
    if len(parts) > 1:
        head, modifiers = parts[0], parts[1:]
        literal += [" ".join([*reversed(modifiers), head]), " ".join([*modifiers, head]),
                    " ".join(parts)]
    stripped = [" ".join(w for w in _TOKEN.findall(f) if w not in words)
                for words in _STRIPPED.get(kind, ()) for f in literal]
    out: list[str] = []
    for form in [*literal, *stripped]:
        form = " ".join(form.replace(",", " ").split())
        if form and form not in out:
            out.append(form)
    return tuple(out)
