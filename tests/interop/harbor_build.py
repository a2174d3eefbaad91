"""Build a Harbor task directory with the ``harbor`` package itself, then check it with harbor's own
``Task`` loader. Runs in the harbor venv (Python >= 3.12): ``python harbor_build.py SPEC.json``.

SPEC: ``{"out": folder, "name": "org/name", "steps": 0, "instruction": text, "solve": text,
"test": text, "solution_files": {name: text}, "environment_files": {name: text}, "dockerfile": bool,
"agent_timeout": float, "verifier_timeout": float, "workdir": str | null, "verifier_env": {...},
"verifier_mode": "shared" | "separate"}``.
Prints ``{"task_dir": ..., "valid": bool, "name": harbor's name for it}``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task

spec = json.loads(Path(sys.argv[1]).read_text())
out = Path(spec["out"])
harbor = Path(sys.executable).parent / "harbor"
mode = spec.get("verifier_mode", "shared")
args = [str(harbor), "init", "--task", spec["name"], "-o", str(out), "--no-pytest", "--verifier-mode", mode]
if spec.get("steps"):
    args += ["--steps", str(spec["steps"])]
subprocess.run(args, check=True, capture_output=True, env={**os.environ, "HARBOR_TELEMETRY": "0"})
task_dir = out / spec["name"].split("/", 1)[1]

config = TaskConfig.model_validate_toml((task_dir / "task.toml").read_text())
config.agent.timeout_sec = spec.get("agent_timeout", config.agent.timeout_sec)
config.verifier.timeout_sec = spec.get("verifier_timeout", config.verifier.timeout_sec)
config.verifier.env = spec.get("verifier_env", {})
config.environment.workdir = spec.get("workdir")
(task_dir / "task.toml").write_text(config.model_dump_toml())

if not spec.get("steps"):
    (task_dir / "instruction.md").write_text(spec["instruction"])
    (task_dir / "solution" / "solve.sh").write_text(spec["solve"])
    (task_dir / "tests" / "test.sh").write_text(spec["test"])
    for name, text in spec.get("solution_files", {}).items():
        (task_dir / "solution" / name).write_text(text)
    for name, text in spec.get("test_files", {}).items():
        (task_dir / "tests" / name).write_text(text)
for name, text in spec.get("environment_files", {}).items():
    (task_dir / "environment" / name).write_text(text)
if not spec.get("dockerfile", True):
    (task_dir / "environment" / "Dockerfile").unlink()

task = Task(task_dir)
print(json.dumps({"task_dir": str(task_dir), "valid": Task.is_valid_dir(task_dir), "name": task.name}))
