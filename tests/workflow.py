"""A GitHub Actions job run here, step by step as its workflow file writes it.

``Job(workflow, "eval").run(event, workspace)`` runs every step in order: each ``run:`` step through
bash exactly as written (``${{ }}`` expressions evaluated, the job's and the step's ``env`` set, the
``if:`` conditions honoured), and each ``uses:`` step by a local equivalent, since those are code of
GitHub's that cannot run here:

- ``actions/checkout``: the repository's tracked files copied into the workspace, committed to a
  fresh git repository (a checkout is one);
- ``actions/setup-python``: a fresh virtualenv first on PATH, whose package index is this machine's
  installed packages (visible to it, so ``pip install`` resolves offline) and a folder of wheels for
  build backends;
- ``actions/upload-artifact``: the path copied into a local artifact store, its URL as the step's
  ``artifact-url`` output.

The ``gh`` CLI the runners ship is a local one too (``gh run list``, ``gh run download`` and
``gh pr comment`` on the same artifact store and a comments folder): it is the artifact download and
the pull-request comment of the recipe, the other two things that need GitHub.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import REPO

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>\d+(?:\.\d+)?)|(?P<op>&&|\|\||==|!=|!|\(|\))"
    r"|(?P<name>[A-Za-z_][\w.-]*)(?P<call>\(\))?)"
)
OPS = {"&&": " and ", "||": " or ", "!": " not ", "==": " == ", "!=": " != ", "(": "(", ")": ")"}


@dataclass
class Event:
    """What GitHub would fill in for one workflow run: the ``github`` context and the secrets."""

    run_id: int
    event_name: str
    ref: str
    head_ref: str = ""
    number: int | None = None
    repository: str = "acme/site"
    server_url: str = "https://github.example"
    secrets: dict[str, str] = field(default_factory=dict)
    change: Callable[[Path], None] | None = None
    """What the commit under test changed, done to the checkout (a pull request's edit)."""

    def github(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "event_name": self.event_name, "ref": self.ref,
            "ref_name": self.ref.removeprefix("refs/heads/"), "head_ref": self.head_ref,
            "repository": self.repository, "server_url": self.server_url, "token": "local-token",
            "event": {"number": self.number},
        }  # fmt: skip


@dataclass
class StepRun:
    """One step as it ran: its id, outcome (success, failure, skipped), output and outputs."""

    name: str
    outcome: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    outputs: dict[str, str] = field(default_factory=dict)


class Context:
    """The expression contexts of a running job: ``github``, ``secrets``, ``steps``, ``env``."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.steps: dict[str, StepRun] = {}
        self.ran: list[StepRun] = []

    def lookup(self, name: str) -> Any:
        """``github.event.number`` -> its value; an unknown name or property is null, as in GitHub."""
        head, *rest = name.split(".")
        value: Any = {
            "github": self.event.github(),
            "secrets": self.event.secrets,
            "steps": {k: {"outcome": s.outcome, "conclusion": s.outcome, "outputs": s.outputs}
                      for k, s in self.steps.items()},
        }.get(head)  # fmt: skip
        for key in rest:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    def call(self, name: str) -> bool:
        failed = any(s.outcome == "failure" for s in self.ran)
        known = {"always": True, "success": not failed, "failure": failed, "cancelled": False}
        if name not in known:
            raise ValueError(f"expression function {name}() is not supported here")
        return known[name]

    def evaluate(self, expression: str) -> Any:
        """A GitHub expression's value: literals, contexts, ``! == != && ||``, status functions."""
        source, at = [], 0
        while at < len(expression.rstrip()):
            match = TOKEN.match(expression, at)
            if match is None:
                raise ValueError(f"cannot read the expression {expression!r} at {expression[at:]!r}")
            at = match.end()
            if match["string"]:
                source.append(repr(match["string"][1:-1].replace("''", "'")))
            elif match["number"]:
                source.append(match["number"])
            elif match["op"]:
                source.append(OPS[match["op"]])
            elif match["call"]:
                source.append(repr(self.call(match["name"])))
            else:
                literal = {"true": True, "false": False, "null": None}
                name = match["name"]
                if expression[at:].lstrip().startswith("("):
                    raise ValueError(f"expression function {name}(...) is not supported here")
                source.append(repr(literal[name] if name in literal else self.lookup(name)))
        return eval("".join(source), {"__builtins__": {}})  # built from repr()s and operators only

    def substitute(self, text: str) -> str:
        """``${{ expr }}`` in ``text`` replaced by its value (null as the empty string)."""

        def value(match: re.Match[str]) -> str:
            found = self.evaluate(match.group(1))
            return "" if found is None else str(found)

        return EXPRESSION.sub(value, text)

    def condition(self, step: dict[str, Any]) -> bool:
        """A step's ``if:`` (default ``success()``), with or without its ``${{ }}``."""
        text = str(step.get("if", "success()"))
        inner = EXPRESSION.fullmatch(text.strip())
        return bool(self.evaluate(inner.group(1) if inner else text))


@dataclass
class Machine:
    """What outlives one job: the artifact store, the workflow runs ``gh`` lists, the PR comments."""

    root: Path

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def comments(self) -> Path:
        return self.root / "comments"

    @property
    def runs_file(self) -> Path:
        return self.root / "workflow-runs.json"

    def finished(self, event: Event, conclusion: str) -> None:
        """Record a finished workflow run, as ``gh run list`` lists it."""
        runs = json.loads(self.runs_file.read_text()) if self.runs_file.exists() else []
        branch = event.head_ref or event.ref.removeprefix("refs/heads/")
        runs.insert(0, {"databaseId": event.run_id, "headBranch": branch, "status": "completed",
                        "conclusion": conclusion})  # fmt: skip
        self.runs_file.write_text(json.dumps(runs))

    def gh(self, folder: Path) -> Path:
        """A ``gh`` program on this machine's artifact store and comments, in ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        program = folder / "gh"
        program.write_text(f"#!{sys.executable}\n" + GH.format(root=str(self.root)))
        program.chmod(0o755)
        return folder


GH = textwrap.dedent(
    '''
    """gh, locally: run list, run download and pr comment on the artifact store of tests/workflow.py."""
    import json, shutil, sys
    from pathlib import Path

    ROOT = Path({root!r})


    def option(args, name, default=None):
        return args[args.index(name) + 1] if name in args else default


    def main(args):
        if args[:2] == ["run", "list"]:
            if option(args, "--jq") != ".[0].databaseId // empty" or option(args, "--json") != "databaseId":
                sys.exit("gh (local): only --json databaseId --jq '.[0].databaseId // empty' is known")
            listed = ROOT / "workflow-runs.json"
            runs = json.loads(listed.read_text()) if listed.exists() else []
            runs = [r for r in runs if r["headBranch"] == option(args, "--branch", r["headBranch"])
                    and r["status"] == option(args, "--status", r["status"])]
            if runs:
                print(runs[0]["databaseId"])
        elif args[:2] == ["run", "download"]:
            found = ROOT / "artifacts" / args[2] / option(args, "--name")
            if not found.is_dir():
                sys.exit(f"no artifact matches any of the names or patterns provided")
            shutil.copytree(found, Path(option(args, "--dir", ".")), dirs_exist_ok=True)
        elif args[:2] == ["pr", "comment"]:
            folder = ROOT / "comments" / args[2]
            earlier = sorted(folder.glob("*.md")) if folder.is_dir() else []
            if "--edit-last" in args and not earlier:
                sys.exit("no comments found for current user")
            folder.mkdir(parents=True, exist_ok=True)
            target = earlier[-1] if "--edit-last" in args else folder / f"{{len(earlier):03d}}.md"
            shutil.copy(option(args, "--body-file"), target)
            print(f"https://github.example/pull/{{args[2]}}#comment-{{target.stem}}")
        else:
            sys.exit(f"gh (local): {{' '.join(args)}} is not known here")


    main(sys.argv[1:])
    '''
)


class Job:
    """One job of a workflow file, run here (see the module docstring)."""

    def __init__(self, workflow: Path, name: str) -> None:
        self.spec: dict[str, Any] = yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"][name]

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.spec["steps"])

    def run(self, event: Event, workspace: Path, machine: Machine, wheels: Path) -> Context:
        """Every step in order; the job's run is recorded on ``machine`` when it ends."""
        context = Context(event)
        tools = workspace.parent / f"{workspace.name}-tools"
        env = self.base_env(event, workspace, machine.gh(tools / "gh"))
        for number, step in enumerate(self.steps):
            name = step.get("id") or step.get("name") or step.get("uses") or f"step {number}"
            if not context.condition(step):
                ran = StepRun(name, "skipped")
            elif "uses" in step:
                ran = self.uses(step, context, workspace, machine, env, tools, wheels)
            else:
                ran = self.shell(step, context, workspace, env)
            ran.name = name
            context.ran.append(ran)
            if "id" in step:
                context.steps[step["id"]] = ran
        failed = any(s.outcome == "failure" for s in context.ran)
        machine.finished(event, "failure" if failed else "success")
        return context

    def base_env(self, event: Event, workspace: Path, gh: Path) -> dict[str, str]:
        """This machine's environment without coder_eval's or a model's settings, and GitHub's own."""
        dropped = ("ANTHROPIC_", "CODER_EVAL_", "VIRTUAL_ENV", "PYTHONPATH", "PIP_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
        env["PATH"] = os.pathsep.join(
            [str(gh), *(p for p in env["PATH"].split(os.pathsep) if Path(p) != Path(sys.executable).parent)]
        )
        github = event.github()
        return env | {
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_NAME": event.event_name, "GITHUB_REF": event.ref,
            "GITHUB_REF_NAME": github["ref_name"], "GITHUB_HEAD_REF": event.head_ref,
            "GITHUB_RUN_ID": str(event.run_id), "GITHUB_REPOSITORY": event.repository,
            "GITHUB_STEP_SUMMARY": str(workspace.parent / f"{workspace.name}-step-summary.md"),
        }  # fmt: skip

    def step_env(self, step: dict[str, Any], context: Context, env: dict[str, str]) -> dict[str, str]:
        values = {**self.spec.get("env", {}), **step.get("env", {})}
        return env | {k: context.substitute(str(v)) for k, v in values.items()}

    def shell(self, step: dict[str, Any], context: Context, workspace: Path, env: dict[str, str]) -> StepRun:
        """A ``run:`` step through bash as GitHub runs it (``bash --noprofile --norc -eo pipefail``)."""
        script = workspace.parent / f"{workspace.name}-step.sh"
        script.write_text(context.substitute(step["run"]), encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace, env=self.step_env(step, context, env), capture_output=True, text=True,
            timeout=2400, check=False,
        )  # fmt: skip
        outcome = "success" if done.returncode == 0 else "failure"
        return StepRun(
            step.get("id", step.get("name", "")), outcome, done.stdout, done.stderr, done.returncode
        )

    def uses(
        self,
        step: dict[str, Any],
        context: Context,
        workspace: Path,
        machine: Machine,
        env: dict[str, str],
        tools: Path,
        wheels: Path,
    ) -> StepRun:
        action = step["uses"].split("@")[0]
        name = step.get("id", action)
        with_ = {k: context.substitute(str(v)) for k, v in step.get("with", {}).items()}
        if action == "actions/checkout":
            checkout(workspace, context.event.change)
        elif action == "actions/setup-python":
            env["PATH"] = f"{fresh_python(tools / 'python', wheels, env)}{os.pathsep}{env['PATH']}"
        elif action == "actions/upload-artifact":
            return upload(name, with_, workspace, machine, context.event)
        else:
            raise ValueError(f"no local equivalent of {action}")
        return StepRun(name, "success")


def checkout(workspace: Path, change: Callable[[Path], None] | None = None) -> None:
    """The repository's tracked files (as they are in the work tree), with ``change`` made to them,
    committed in ``workspace``."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        source = REPO / name
        if source.is_file():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, workspace / name)
    if change is not None:
        change(workspace)
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    for command in (["init", "-q", "-b", "checkout"], ["add", "-A"], ["commit", "-qm", "checkout"]):
        subprocess.run([*git, *command], cwd=workspace, check=True, capture_output=True)


def fresh_python(folder: Path, wheels: Path, env: dict[str, str]) -> Path:
    """A new virtualenv seeing this machine's installed packages; pip offline on them and ``wheels``.
    Returns its ``bin`` folder."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    site = Path(sysconfig.get_paths()["purelib"])
    inner = next((folder / "lib").glob("python*/site-packages"))
    (inner / "machine-packages.pth").write_text(f"{site}\n")  # a path line: their .pth files stay off
    shared = Path(sys.prefix) / "share" / "jupyter"  # their data files: nbconvert's templates, kernels
    if shared.is_dir():
        (folder / "share").mkdir(exist_ok=True)
        (folder / "share" / "jupyter").symlink_to(shared)
    env |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_CONFIG_FILE": os.devnull,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # fmt: skip
    return folder / "bin"


def upload(name: str, with_: dict[str, str], workspace: Path, machine: Machine, event: Event) -> StepRun:
    """The path (relative to the workspace) kept as artifact ``with.name`` of this workflow run."""
    source = workspace / with_["path"]
    if not source.exists() or (source.is_dir() and not any(source.iterdir())):
        if with_.get("if-no-files-found", "warn") == "error":
            return StepRun(name, "failure", stderr=f"no files found at {with_['path']}")
        return StepRun(name, "success", stderr=f"no files found at {with_['path']}")
    target = machine.artifacts / str(event.run_id) / with_["name"]
    shutil.copytree(source, target, dirs_exist_ok=True) if source.is_dir() else shutil.copy2(source, target)
    url = f"{event.server_url}/{event.repository}/actions/runs/{event.run_id}/artifacts/{with_['name']}"
    return StepRun(name, "success", outputs={"artifact-url": url})
