"""What ships: the package list, the templates and default experiment as resources, environment.yml,
and (slow) the wheel installed with only the ``analysis`` extra into a fresh virtualenv, used from a
folder outside the repository."""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

import coder_eval
from coder_eval.run.render import TEMPLATES
from coder_eval.trajectory import read_trajectory
from coder_eval.version import DISTRIBUTION, pip_install
from tests.helpers import REPO
from tests.wheelhouse import wheelhouse

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SOURCES = ["pyproject.toml", "README.md", "coder_eval", "notebooks", "experiments"]


def requirements(*extras: str) -> dict[str, Requirement]:
    project = PYPROJECT["project"]
    texts = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    return {Requirement(t).name.lower(): Requirement(t) for t in texts}


def test_every_package_under_coder_eval_is_listed_for_the_wheel() -> None:
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "coder_eval").rglob("__init__.py")}
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == {"coder_eval.notebooks", "coder_eval.experiments"}


def test_templates_and_the_default_experiment_are_package_resources() -> None:
    notebooks = importlib.resources.files("coder_eval.notebooks")
    for spec in TEMPLATES.values():
        assert (notebooks / spec.notebook).read_text(encoding="utf-8") == (
            REPO / "notebooks" / spec.notebook
        ).read_text(encoding="utf-8")
    shipped = importlib.resources.files("coder_eval.experiments") / "default.yaml"
    assert yaml.safe_load(shipped.read_text(encoding="utf-8"))["experiment_id"] == "default"


PIP_INSTALL = re.compile(r"pip install[^`\n]*?['\"]?\b(?P<name>[\w.-]+)\[(?P<extra>[\w,]+)\]")
"""A ``pip install NAME[EXTRA]`` in prose, a sample, a workflow or a hint."""


def test_the_distribution_is_its_own_name_and_every_install_line_uses_it() -> None:
    assert PYPROJECT["project"]["name"] == DISTRIBUTION == "coder-eval-toolkit"
    assert PYPROJECT["project"]["scripts"] == {"coder-eval": "coder_eval.cli:main"}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {Requirement(r).name for e in extras.values() for r in e if "coder" in r} == {DISTRIBUTION}
    texts = [
        REPO / "README.md",
        *sorted((REPO / "docs").rglob("*.md")),
        *sorted((REPO / "docs").rglob("*.yml")),
    ]
    texts += sorted((REPO / "coder_eval").rglob("*.py"))
    named = {
        (p.relative_to(REPO).as_posix(), m["name"])
        for p in texts
        for m in PIP_INSTALL.finditer(p.read_text(encoding="utf-8"))
    }
    assert named, "no install line found: the pattern is wrong"
    wrong = {(path, name) for path, name in named if name not in (DISTRIBUTION, ".")}
    assert wrong == set(), (
        "install lines must name the distribution (the PyPI name coder-eval is another project)"
    )
    assert pip_install("lab") == "pip install 'coder-eval-toolkit[lab]'"


def test_environment_yml_installs_the_core_and_analysis_dependencies_only() -> None:
    environment = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    conda = [d for d in environment["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert pip == ["-e .[analysis]"]
    wanted = requirements("analysis")
    lab_only = set(requirements("lab", "dev")) - set(wanted)
    for line in conda:
        name, _, bound = re.match(r"([a-z0-9_.-]+)(>=)?(.*)", line).groups()  # type: ignore[union-attr]
        if name in ("python", "pip"):
            continue
        assert name not in lab_only, f"{name} belongs to the lab or dev extra"
        assert name in wanted, f"{name} is not a core or analysis dependency of pyproject.toml"
        assert str(wanted[name].specifier) == (f">={bound}" if bound else ""), name
    missing = set(wanted) - {re.split(r"[<>=]", line)[0] for line in conda}
    assert missing <= {"claude-agent-sdk"}, f"add {sorted(missing)} to environment.yml"


def build_wheel(folder: Path) -> Path:
    """coder_eval's wheel, built offline from a copy of the sources (the checkout stays clean)."""
    source = folder / "source"
    for name in SOURCES:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(item, source / name)
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    result = subprocess.run([*pip, str(source), "-w", str(folder / "dist")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr.lower(), result.stderr
    return next((folder / "dist").glob("coder_eval_toolkit-*.whl"))


def fresh_venv(folder: Path, wheel: Path, house: Path) -> Path:
    """A new virtualenv with the wheel and its ``analysis`` extra, from local wheels only (installed by
    this environment's pip, ``--python``: the new one needs none of its own)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python")]
    install = [*pip, "install", "-q", "--no-index", "--no-compile"]
    links = ["--find-links", str(house), "--find-links", str(wheel.parent)]
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    result = subprocess.run(
        [*install, *links, f"{DISTRIBUTION}[analysis]"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return folder / "bin"


def outside(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``coder-eval`` of the fresh virtualenv, with nothing of the checkout on the paths, in a shell
    that lets Python cache the bytecode of what it imports (as a user's does: the test runner's may
    not, and each report's processes would compile pandas and SciPy again)."""
    left_out = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    env = {key: value for key, value in os.environ.items() if key not in left_out}
    env |= {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(bin_dir / "coder-eval"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_development_environment_is_installed_with_its_bytecode() -> None:
    """``make setup`` (``scripts/install.sh .venv dev``) compiles what it installed and coder_eval's
    own modules: where PYTHONDONTWRITEBYTECODE is set, nothing else would, and every process the tests
    start would compile pandas and SciPy again."""
    if Path(sys.prefix) != REPO / ".venv":
        pytest.skip(f"not the environment make setup made ({sys.prefix})")
    for name in ("pandas", "scipy.stats", "statsmodels.api", "coder_eval", "coder_eval.cli"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        assert Path(importlib.util.cache_from_source(spec.origin)).is_file(), f"{name} is not compiled"


@pytest.mark.slow
def test_the_wheel_with_the_analysis_extra_runs_the_examples_and_renders_every_report(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    wheel = build_wheel(tmp_path / "build")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"coder_eval/notebooks/{t.notebook}" for t in TEMPLATES.values()} <= names
    assert "coder_eval/experiments/default.yaml" in names
    assert not any(n.startswith(("notebooks/", "experiments/", "tasks/")) for n in names)

    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    house = cache.mkdir("wheelhouse") if cache is not None else tmp_path / "wheelhouse"  # reused between runs
    wheelhouse([str(r) for r in requirements("analysis").values()], house)
    bin_dir = fresh_venv(tmp_path / "venv", wheel, house)

    work = tmp_path / "user"
    shutil.copytree(REPO / "tasks" / "examples", work / "tasks" / "examples")
    shutil.copytree(REPO / "tests" / "fixtures" / "runs" / "skill-ab", work / "runs" / "skill-ab")
    assert outside(bin_dir, work, "--version").stdout.strip() == f"coder-eval {coder_eval.__version__}"
    ran = outside(bin_dir, work, "run", "tasks/examples", "--agent", "oracle")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run = (work / "runs" / "latest").resolve()
    ends = {p.stem: read_trajectory(p).end for p in (run / "episodes").glob("*.jsonl")}
    failing = {k: (e.outcome, e.status, e.error) for k, e in ends.items() if e is None or e.outcome != "pass"}
    assert len(ends) == len(list((REPO / "tasks" / "examples").glob("*.yaml"))) and not failing, failing
    experiment = json.loads((run / "run.json").read_text())["experiment"]["path"]
    assert experiment.startswith(str(tmp_path / "venv")), experiment  # the shipped default

    for template, params in [
        ("run_report", []),
        ("compare_report", []),
        ("classification_report", ["-p", "criterion=skill_triggered"]),
    ]:
        target = "runs/latest" if template == "run_report" else "runs/skill-ab"
        rendered = outside(bin_dir, work, "report", target, "--template", template, *params)
        assert rendered.returncode == 0, rendered.stdout + rendered.stderr
        assert (work / rendered.stdout.split("report: ")[-1].strip()).is_file()
