"""reference_comparison: the agent's file against the task's reference (tokens, syntax tree, complexity)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.criteria import GradingContext, HiddenMaterial
from coder_eval.criteria.reference_comparison import complexity, quality, signatures, similarity
from coder_eval.errors import GraderError
from coder_eval.sandbox import FakeSandbox
from tests.criteria.builders import grade, load_error

REFERENCE = (
    "def slug(text):\n    if not text:\n        return ''\n    return '-'.join(text.lower().split())\n"
)
RENAMED = "def slugify(s):\n    if not s:\n        return ''\n    return '-'.join(s.lower().split())\n"
DIFFERENT = "import os\nprint(os.getcwd())\n"


def ctx_for(tmp_path: Path, agent_text: str | None) -> GradingContext:
    reference = tmp_path / "reference"
    reference.mkdir(exist_ok=True)
    (reference / "slug.py").write_text(REFERENCE)
    files = {"src/slug.py": agent_text} if agent_text is not None else {}
    return GradingContext(FakeSandbox(files), [], tmp_path / "task", HiddenMaterial(reference_dir=reference))


SPEC = {"type": "reference_comparison", "agent_file": "src/slug.py", "reference_file": "slug.py"}


@pytest.mark.parametrize("method", ["ast", "token", "complexity", "signature", "quality"])
def test_identical_code_scores_one(tmp_path: Path, method: str) -> None:
    verdict = grade({**SPEC, "comparison_method": method}, ctx_for(tmp_path, REFERENCE))
    assert verdict.score == 1.0 and verdict.passed is True


def test_ast_ignores_names_that_tokens_see(tmp_path: Path) -> None:
    ast_score = grade({**SPEC, "comparison_method": "ast"}, ctx_for(tmp_path, RENAMED)).score
    token_score = grade({**SPEC, "comparison_method": "token"}, ctx_for(tmp_path, RENAMED)).score
    assert ast_score == 1.0 and 0.5 < token_score < 1.0


def test_unrelated_code_fails_and_the_similarity_threshold_decides(tmp_path: Path) -> None:
    verdict = grade({**SPEC, "comparison_method": "ast"}, ctx_for(tmp_path, DIFFERENT))
    assert verdict.score < 0.5 and verdict.passed is False
    low = grade(
        {**SPEC, "similarity_threshold": 0.1, "comparison_method": "ast"}, ctx_for(tmp_path, DIFFERENT)
    )
    assert low.passed is (low.score >= 0.1) and low.details["threshold"] == 0.1


def test_complexity_compares_branch_counts() -> None:
    assert complexity(REFERENCE) == 2
    score, compared = similarity("complexity", DIFFERENT, REFERENCE)
    assert score == 0.5 and compared == {"agent_complexity": 1, "reference_complexity": 2}


def test_agent_file_missing_or_not_python_is_the_agents_failure(tmp_path: Path) -> None:
    assert grade(SPEC, ctx_for(tmp_path, None)).score == 0.0
    verdict = grade({**SPEC, "comparison_method": "ast"}, ctx_for(tmp_path, "def (:\n"))
    assert verdict.score == 0.0 and "not Python" in verdict.details["error"]


def test_reference_comes_from_the_tasks_own_folders_only(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path, REFERENCE)
    ctx.sandbox.files["slug_ref.py"] = REFERENCE.encode()  # type: ignore[attr-defined]
    with pytest.raises(GraderError, match=r"'slug_ref\.py' not found in the task's own files"):
        grade({**SPEC, "reference_file": "slug_ref.py"}, ctx)
    assert grade({**SPEC, "reference_file": "$REFERENCE_DIR/slug.py"}, ctx).score == 1.0
    with pytest.raises(GraderError, match="not found"):
        grade({**SPEC, "reference_file": "$TASK_DIR/slug.py"}, ctx)


def test_bad_fields_fail_at_load(tmp_path: Path) -> None:
    base = "- type: reference_comparison\n  agent_file: a.py\n  reference_file: b.py\n"
    assert "comparison_method" in load_error(tmp_path, base + "  comparison_method: vibes")
    assert "similarity_threshold" in load_error(tmp_path, base + "  similarity_threshold: 1.5")
    assert "escapes the sandbox" in load_error(tmp_path, base.replace("a.py", "../a.py"))


TYPED = '''"""Slugs for titles."""


class Slugger:
    def slug(self, text: str, sep: str = "-") -> str:
        """The slug of ``text``."""
        try:
            return sep.join(text.lower().split())
        except AttributeError:
            return ""

    @staticmethod
    def clean(value) -> str:
        return str(value)


async def fetch(url: str, *args: int, retries: int = 3, **kw) -> bytes:
    """Fetch ``url``."""
    return b""
'''


def test_a_signature_is_name_positional_parameters_and_return_annotation() -> None:
    assert signatures(TYPED) == {
        "slug(self, text, sep) -> str",
        "clean(value) -> str",
        "fetch(url) -> bytes",
    }
    assert signatures(REFERENCE) == {"slug(text) -> None"}


def test_signature_scores_the_jaccard_index_of_the_two_sets() -> None:
    agent = "def slug(text):\n    pass\n\ndef extra(a, b) -> int:\n    return a\n"
    score, compared = similarity("signature", agent, REFERENCE)
    assert score == 0.5  # one shared of two in all
    assert compared == {
        "shared": ["slug(text) -> None"],
        "only_agent": ["extra(a, b) -> int"],
        "only_reference": [],
    }
    assert similarity("signature", "x = 1\n", "y = 2\n")[0] == 1.0  # neither defines a function
    assert similarity("signature", RENAMED, REFERENCE)[0] == 0.0  # a renamed function is another one


def test_quality_weighs_type_hints_docstrings_and_error_handling() -> None:
    parts = quality(TYPED)
    # slug: return + 2/2 params (self left out) = 1; clean (static, value unannotated): 0.5 + 0 = 0.5;
    # fetch: return + 3/4 (url, *args, retries; **kw not) = 0.875
    assert parts.type_hints == pytest.approx((1 + 0.5 + 0.875) / 3)
    assert parts.docstrings == pytest.approx(0.3 + 0.7 * 2 / 3)  # module + two of three functions
    assert parts.error_handling == pytest.approx(0.5 + 0.5 / 3)  # one try over three functions
    assert parts.score == pytest.approx(
        0.3 * parts.type_hints + 0.3 * parts.docstrings + 0.4 * parts.error_handling
    )
    assert quality(REFERENCE) == (0.0, 0.0, 0.3)
    assert quality("x = 1\n") == (1.0, 0.5, 0.5) and quality('"""Doc."""\n').docstrings == 1.0


def test_quality_is_the_agents_share_of_the_references_capped_at_one(tmp_path: Path) -> None:
    spec = {**SPEC, "comparison_method": "quality", "similarity_threshold": 0.8}
    better = grade(spec, ctx_for(tmp_path, TYPED))
    assert better.score == 1.0 and better.passed is True
    assert better.details["agent_quality"]["score"] > better.details["reference_quality"]["score"]

    (tmp_path / "reference" / "slug.py").write_text(TYPED)
    ctx = GradingContext(
        FakeSandbox({"src/slug.py": REFERENCE}),
        [],
        tmp_path / "task",
        HiddenMaterial(reference_dir=tmp_path / "reference"),
    )
    worse = grade(spec, ctx)
    assert (
        worse.score == pytest.approx(quality(REFERENCE).score / quality(TYPED).score)
        and worse.passed is False
    )


@pytest.mark.parametrize("method", ["signature", "quality"])
def test_the_new_methods_need_python_on_both_sides(tmp_path: Path, method: str) -> None:
    verdict = grade({**SPEC, "comparison_method": method}, ctx_for(tmp_path, "def (:\n"))
    assert verdict.score == 0.0 and "not Python" in verdict.details["error"]
    (tmp_path / "reference").mkdir(exist_ok=True)
    ctx = ctx_for(tmp_path, REFERENCE)
    (tmp_path / "reference" / "slug.py").write_text("def (:\n")
    with pytest.raises(GraderError, match=r"reference 'slug\.py' is not Python"):
        grade({**SPEC, "comparison_method": method}, ctx)
