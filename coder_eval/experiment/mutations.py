"""Prompt mutations of a variant, applied after dataset substitution.

Order: ``${var.<name>}`` substitution, then each ``replace`` in turn, then ``prefix`` and ``suffix``
(joined as written: put the blank line in the text if you want one).

Example::

    mutate_prompt("Fix ${var.target}.", PromptMutations(vars={"target": "calc"}, suffix=" Be brief."))
    # 'Fix calc. Be brief.'
"""

from __future__ import annotations

import re
from typing import NamedTuple

from coder_eval.errors import ExperimentError
from coder_eval.experiment.spec import PromptMutations

VAR_REF = re.compile(r"\$\{var\.([A-Za-z0-9_]+)\}")


class Mutated(NamedTuple):
    """The new prompt, and the ``find`` of each replacement that matched nothing."""

    prompt: str
    unmatched: list[str]


def mutate_prompt(prompt: str, mutations: PromptMutations, where: str = "") -> Mutated:
    """Apply ``mutations``; a ``${var.x}`` the variant does not define is an ExperimentError."""
    missing = sorted({name for name in VAR_REF.findall(prompt) if name not in mutations.vars})
    if missing:
        defined = ", ".join(mutations.vars) or "none"
        raise ExperimentError(
            f"{where}the prompt uses ${{var.{missing[0]}}} but the variant's prompt_mutations.vars "
            f"does not define it (defined: {defined})"
        )
    text = VAR_REF.sub(lambda m: mutations.vars[m.group(1)], prompt)
    unmatched = []
    for rule in mutations.replace:
        if rule.regex:
            text, count = re.subn(rule.find, rule.replace, text)
        else:
            count = text.count(rule.find)
            text = text.replace(rule.find, rule.replace)
        if not count:
            unmatched.append(rule.find)
    return Mutated(f"{mutations.prefix}{text}{mutations.suffix}", unmatched)
