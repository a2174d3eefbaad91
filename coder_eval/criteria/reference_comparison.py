"""``reference_comparison``: how similar a file the agent wrote is to the task's reference file.

``agent_file`` is read from the workspace; ``reference_file`` is the task author's, looked up in the
hidden tests, ``$REFERENCE_DIR`` (the task's ``reference.directory``), then the task folder
(``$REFERENCE_DIR/x`` or ``$TASK_DIR/x`` pick one), never the workspace. The score is a similarity in [0, 1]:

- ``token``: the two token sequences (Python's tokenizer when both files tokenize, else words and
  symbols), compared with ``difflib.SequenceMatcher``;
- ``ast``: the sequences of Python syntax-tree node types, compared the same way (both files must
  parse as Python; the agent's not parsing scores 0);
- ``complexity``: cyclomatic complexity of each (1 + branches), as the smaller over the larger.

It passes when the similarity reaches ``similarity_threshold`` (default: ``pass_threshold``, 0.9).

Example::

    reference: {directory: reference}
    success_criteria:
      - type: reference_comparison
        agent_file: src/slug.py
        reference_file: slug.py
        comparison_method: ast
        similarity_threshold: 0.7
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import io
import re
import tokenize
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import GradingContext, OriginalCriterion, Verdict, read_texts
from coder_eval.criteria.judges.context import trusted_file
from coder_eval.errors import GraderError, WorkspaceFileError
from coder_eval.sandbox.base import SandboxPath

Method = Literal["ast", "token", "complexity"]
SKIPPED_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
SKIPPED_TOKENS |= {tokenize.ENCODING, tokenize.ENDMARKER}
WORDS = re.compile(r"\w+|[^\w\s]")
MAX_COMPARED_BYTES = 256_000
"""A larger agent file is too big to compare (the sequence matcher's time grows with the product of
the two lengths): the check fails. It runs off the event loop."""
BRANCHES: tuple[type[ast.AST], ...] = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler)
BRANCHES += (ast.With, ast.AsyncWith, ast.Assert, ast.comprehension, ast.match_case)


def tokens(text: str) -> list[str]:
    """Python tokens without comments and layout; words and symbols when ``text`` is not Python."""
    try:
        found = tokenize.generate_tokens(io.StringIO(text).readline)
        return [t.string for t in found if t.type not in SKIPPED_TOKENS]
    except (tokenize.TokenError, SyntaxError):
        return WORDS.findall(text)


def node_types(text: str) -> list[str]:
    """The syntax tree's node types, depth first; ``SyntaxError`` when ``text`` is not Python."""
    return [type(node).__name__ for node in _walk(ast.parse(text))]


def _walk(node: ast.AST) -> list[ast.AST]:
    out = [node]
    for child in ast.iter_child_nodes(node):
        out.extend(_walk(child))
    return out


def complexity(text: str) -> int:
    """Cyclomatic complexity: 1 + decision points (branches, loops, handlers, extra boolean operands)."""
    tree = ast.parse(text)
    count = 1
    for node in ast.walk(tree):
        if isinstance(node, BRANCHES):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
    return count


def similarity(method: Method, agent: str, reference: str) -> tuple[float, dict[str, int]]:
    """The similarity of the two texts under ``method``, and what it compared."""
    if method == "complexity":
        a, b = complexity(agent), complexity(reference)
        return min(a, b) / max(a, b), {"agent_complexity": a, "reference_complexity": b}
    if method == "ast":
        left, right = node_types(agent), node_types(reference)
    else:
        left, right = tokens(agent), tokens(reference)
    ratio = difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()
    return ratio, {"agent_items": len(left), "reference_items": len(right)}


class ReferenceComparison(OriginalCriterion):
    type: Literal["reference_comparison"] = "reference_comparison"
    agent_file: SandboxPath = Field(description="The agent's file, relative to the workspace.")
    reference_file: str = Field(
        min_length=1, description="The reference: $REFERENCE_DIR, then the task folder."
    )
    comparison_method: Method = Field(default="token", description="ast, token or complexity.")
    similarity_threshold: float | None = Field(
        default=None, ge=0, le=1, description="Similarity needed to pass (default: pass_threshold)."
    )

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        reference = trusted_file(self.reference_file, ctx).read_text(encoding="utf-8", errors="replace")
        if self.comparison_method in ("ast", "complexity"):
            try:
                ast.parse(reference)
            except SyntaxError as exc:
                raise GraderError(f"reference {self.reference_file!r} is not Python: {exc}") from exc
        try:
            (agent,) = await read_texts(ctx.sandbox, [self.agent_file], limit=MAX_COMPARED_BYTES)
            score, compared = await asyncio.to_thread(similarity, self.comparison_method, agent, reference)
        except WorkspaceFileError as exc:
            return Verdict(score=0.0, details={"error": str(exc)})
        except SyntaxError as exc:
            return Verdict(score=0.0, details={"error": f"{self.agent_file} is not Python: {exc.msg}"})
        except RecursionError:
            return Verdict(score=0.0, details={"error": f"{self.agent_file} is nested too deep to compare"})
        threshold = self.pass_threshold if self.similarity_threshold is None else self.similarity_threshold
        details = {"method": self.comparison_method, "similarity": round(score, 4), **compared}
        return Verdict(score=score, details={**details, "threshold": threshold}, passed=score >= threshold)
