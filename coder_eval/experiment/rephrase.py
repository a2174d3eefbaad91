"""The ``rephrase`` prompt mutation: a model rewrites the prompt once per task and variant.

With ``model: scripted`` the rewrite comes from a scripted model server (``coder_eval.scripted``),
seeded from the variant and task ids, so it runs offline and gives the same prompt every time. Any
other model is called through the Anthropic Messages API and needs ``ANTHROPIC_API_KEY``. The
model answers only through a forced ``submit_prompt`` tool call. The rewritten prompt is the task's
``initial_prompt``, and each rewrite is recorded in the episode's
provenance (``prompt_mutations.rephrase``: model, seed, the prompt before and after).

Example::

    rephraser = Rephraser()
    rewrite = rephraser.bind(seed_for("with-skill", "fix-calc-bug"))
    rewrite("Fix the add function.", RephraseStep(model="scripted", scripted={"turns": [...]}))
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from coder_eval.errors import ExperimentError
from coder_eval.experiment.mutations import REPHRASE_MODEL, Rephrase, RephraseStep

REQUEST_TIMEOUT_S = 120.0
TOOL: dict[str, Any] = {
    "name": "submit_prompt",
    "description": "Submit the rewritten task description.",
    "input_schema": {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "The rewritten task, complete."}},
        "required": ["prompt"],
        "additionalProperties": False,
    },
}
"""The rewrite arrives only through this forced tool call (a scripted model answers with
``{tool_use: {name: submit_prompt, input: {prompt: "..."}}}``)."""


def seed_for(variant_id: str, task_id: str) -> int:
    """A stable 32-bit seed for one variant's rewrite of one task's prompt."""
    return int.from_bytes(hashlib.sha256(f"{variant_id}/{task_id}".encode()).digest()[:4], "big")


class Rephraser:
    """Rewrites prompts, each distinct (step, prompt, seed) once."""

    def __init__(self) -> None:
        self._done: dict[tuple[str, str, int], str] = {}

    def bind(self, seed: int) -> Rephrase:
        """The rewrite function of one task and variant."""
        return lambda prompt, step: self.rewrite(prompt, step, seed)

    def rewrite(self, prompt: str, step: RephraseStep, seed: int) -> str:
        key = (step.model_dump_json(), prompt, seed)
        if key not in self._done:
            self._done[key] = _ask(prompt, step, seed)
        return self._done[key]


def _ask(prompt: str, step: RephraseStep, seed: int) -> str:
    import anthropic

    if step.model != "scripted":
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise ExperimentError(
                f"prompt_mutations: rephrase with model {step.model!r} needs ANTHROPIC_API_KEY "
                "(or model: scripted with a 'scripted' block)"
            )
        with anthropic.Anthropic(timeout=REQUEST_TIMEOUT_S) as client:
            return _call(client, step.model, prompt, step)
    from coder_eval.scripted import ScriptedServer, load_script

    script = load_script(step.scripted or {})
    with (
        ScriptedServer(script, seed=seed) as server,
        anthropic.Anthropic(base_url=server.base_url, api_key="scripted", max_retries=0) as client,
    ):
        return _call(client, script.model or REPHRASE_MODEL, prompt, step)


def _call(client: Any, model: str, prompt: str, step: RephraseStep) -> str:
    import anthropic

    request: dict[str, Any] = {
        "model": model,
        "max_tokens": step.max_tokens,
        "system": step.instruction,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [TOOL],
        "tool_choice": {"type": "tool", "name": TOOL["name"]},
    }
    if step.temperature is not None:  # the client has no keyword for it: sent in the body as written
        request["extra_body"] = {"temperature": step.temperature}
    try:
        response = client.messages.create(**request)
    except anthropic.APIError as exc:
        raise ExperimentError(f"prompt_mutations: rephrase with {model!r} failed: {exc}") from exc
    answer = next(
        (b.input for b in response.content if b.type == "tool_use" and b.name == TOOL["name"]), None
    )
    text = answer.get("prompt") if isinstance(answer, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise ExperimentError(
            f"prompt_mutations: rephrase with {model!r} did not call {TOOL['name']} with a prompt"
        )
    return text.strip()
