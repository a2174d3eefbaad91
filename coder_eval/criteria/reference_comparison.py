"""``reference_comparison``: how similar a file the agent wrote is to the task's reference file.

``agent_file`` is read from the workspace; ``reference_file`` is the task author's, looked up in the
hidden tests, ``$REFERENCE_DIR`` (the task's ``reference.directory``), then the task folder
(``$REFERENCE_DIR/x`` or ``$TASK_DIR/x`` pick one), never the workspace. The score is a similarity in [0, 1]:

- ``token``: the two token sequences (Python's tokenizer when both files tokenize, else words and
  symbols), compared with ``difflib.SequenceMatcher``;
- ``ast``: the sequences of Python syntax-tree node types, compared the same way (both files must
  parse as Python; the agent's not parsing scores 0);
- ``complexity``: cyclomatic complexity of each (1 + branches), as the smaller over the larger;
- ``signature``: the two sets of function signatures (:func:`signatures`), as their Jaccard index
  (shared over all; 1 when neither file defines a function);
- ``quality``: the agent file's code quality (:func:`quality`: type hints, docstrings, error
  handling) as a share of the reference's, capped at 1 (as good as the reference or better: 1).

``ast``, ``complexity``, ``signature`` and ``quality`` need both files to parse as Python (the
reference not parsing is the grader's error; the agent's, a score of 0).

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
from typing import Any, Literal, NamedTuple

from pydantic import Field

from coder_eval.criteria.base import GradingContext, OriginalCriterion, Verdict, read_texts
from coder_eval.criteria.judges.context import trusted_file
from coder_eval.errors import GraderError, WorkspaceFileError
from coder_eval.sandbox.base import SandboxPath

Method = Literal["ast", "token", "complexity", "signature", "quality"]
PYTHON_ONLY = ("ast", "complexity", "signature", "quality")
"""The methods that read both files as Python."""
SKIPPED_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
SKIPPED_TOKENS |= {tokenize.ENCODING, tokenize.ENDMARKER}
WORDS = re.compile(r"\w+|[^\w\s]")
MAX_COMPARED_BYTES = 256_000
"""A larger agent file is too big to compare (the sequence matcher's time grows with the product of
the two lengths): the check fails. It runs off the event loop."""
BRANCHES: tuple[type[ast.AST], ...] = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler)
BRANCHES += (ast.With, ast.AsyncWith, ast.Assert, ast.comprehension, ast.match_case)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
TRIES: tuple[type[ast.AST], ...] = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


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


def signatures(text: str) -> set[str]:
    """Every function's signature, ``name(param, ...) -> return``: its positional parameters' names
    (``self`` included) and its return annotation as written (``None`` when it has none); ``def``
    and ``async def`` alike, methods and nested functions too. ``SyntaxError`` when not Python.

    Example: ``signatures("async def get(self, url: str) -> bytes: ...")`` -> ``{"get(self, url) -> bytes"}``.
    """
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, FUNCTIONS):
            names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            returns = ast.unparse(node.returns) if node.returns is not None else "None"
            found.add(f"{node.name}({', '.join(names)}) -> {returns}")
    return found


def quality(text: str) -> Quality:
    """The code quality of a Python file, in [0, 1]: ``0.3 type_hints + 0.3 docstrings + 0.4
    error_handling`` over its functions (``def`` and ``async def``, methods and nested ones included):

    - ``type_hints``: the mean over functions of half for a return annotation plus half the share of
      annotated parameters (every kind; a method's leading ``self`` or ``cls`` left out; none: all
      annotated); 1 without functions;
    - ``docstrings``: 0.3 for a module docstring plus 0.7 times the share of functions with one;
      without functions, 1 with a module docstring, else 0.5;
    - ``error_handling``: ``min(1, 0.5 + 0.5 tries / functions)`` with ``try`` blocks, 0.3 without
      any, 0.5 without functions.

    Example: ``quality("def f(x: int) -> int:\\n    'Twice.'\\n    return 2 * x\\n").score`` -> ``0.63``
    (hints 1, docstrings 0.7, no ``try``: 0.3).
    """
    tree = ast.parse(text)
    functions = [n for n in ast.walk(tree) if isinstance(n, FUNCTIONS)]
    methods = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in c.body}
    tries = sum(isinstance(n, TRIES) for n in ast.walk(tree))
    module_doc = ast.get_docstring(tree) is not None
    if not functions:
        return Quality(1.0, 1.0 if module_doc else 0.5, 0.5)
    hints = sum(_hinted(f, id(f) in methods) for f in functions) / len(functions)
    documented = sum(ast.get_docstring(f) is not None for f in functions) / len(functions)
    handling = min(1.0, 0.5 + 0.5 * tries / len(functions)) if tries else 0.3
    return Quality(hints, 0.3 * module_doc + 0.7 * documented, handling)


class Quality(NamedTuple):
    """:func:`quality`'s three parts; ``score`` weighs them."""

    type_hints: float
    docstrings: float
    error_handling: float

    @property
    def score(self) -> float:
        return 0.3 * self.type_hints + 0.3 * self.docstrings + 0.4 * self.error_handling


def _hinted(function: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool) -> float:
    """Half for a return annotation, half the share of annotated parameters."""
    a = function.args
    params = [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs]
    params += [a.kwarg] if a.kwarg else []
    if is_method and params and params[0].arg in ("self", "cls") and not _is_static(function):
        params = params[1:]
    share = sum(p.annotation is not None for p in params) / len(params) if params else 1.0
    return 0.5 * (function.returns is not None) + 0.5 * share


def _is_static(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)


def similarity(method: Method, agent: str, reference: str) -> tuple[float, dict[str, Any]]:
    """The similarity of the two texts under ``method``, and what it compared."""
    if method == "complexity":
        a, b = complexity(agent), complexity(reference)
        return min(a, b) / max(a, b), {"agent_complexity": a, "reference_complexity": b}
    if method == "signature":
        mine, theirs = signatures(agent), signatures(reference)
        score = len(mine & theirs) / len(mine | theirs) if mine | theirs else 1.0
        sets = {"shared": mine & theirs, "only_agent": mine - theirs, "only_reference": theirs - mine}
        return score, {key: [s[:200] for s in sorted(found)[:20]] for key, found in sets.items()}
    if method == "quality":
        mine_q, theirs_q = quality(agent), quality(reference)
        score = 1.0 if mine_q.score >= theirs_q.score else mine_q.score / theirs_q.score
        return score, {"agent_quality": _parts(mine_q), "reference_quality": _parts(theirs_q)}
    if method == "ast":
        left, right = node_types(agent), node_types(reference)
    else:
        left, right = tokens(agent), tokens(reference)
    ratio = difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()
    return ratio, {"agent_items": len(left), "reference_items": len(right)}


def _parts(q: Quality) -> dict[str, float]:
    return {"score": round(q.score, 4), **{k: round(v, 4) for k, v in q._asdict().items()}}


class ReferenceComparison(OriginalCriterion):
    type: Literal["reference_comparison"] = "reference_comparison"
    agent_file: SandboxPath = Field(description="The agent's file, relative to the workspace.")
    reference_file: str = Field(
        min_length=1, description="The reference: $REFERENCE_DIR, then the task folder."
    )
    comparison_method: Method = Field(
        default="token", description="ast, token, complexity, signature or quality."
    )
    similarity_threshold: float | None = Field(
        default=None, ge=0, le=1, description="Similarity needed to pass (default: pass_threshold)."
    )

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        reference = trusted_file(self.reference_file, ctx).read_text(encoding="utf-8", errors="replace")
        if self.comparison_method in PYTHON_ONLY:
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
