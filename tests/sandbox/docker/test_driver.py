"""The docker driver as a boundary: the container's isolation, network modes, limits, images, clean-up.

The verbs themselves are tested on every driver in ``test_drivers.py``; the attacks in
``tests/security``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.errors import SandboxError, WorkspaceFileError
from coder_eval.sandbox import DockerSandbox, DockerSpec, Mount, Provision, SandboxSpec
from coder_eval.sandbox.bwrap import interpreter_folders
from coder_eval.sandbox.docker.images import build_hash
from coder_eval.sandbox.leftovers import OWNER_FILE, reap_dead
from coder_eval.sandbox.spec import Limits, StarterFile, StarterFiles
from coder_eval.task import load_tasks
from tests.sandbox.builders import host_folder, run, tcp_server, through_model_route
from tests.sandbox.conftest import MakeSandbox

pytestmark = pytest.mark.docker

CONNECT = (
    "import socket, sys\n"
    "s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)\n"
    "s.sendall(b'ping'); print(s.recv(100).decode())"
)


def container_exists(name: str) -> bool:
    done = subprocess.run(["docker", "container", "inspect", name], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def echo_server() -> Iterator[int]:
    """A TCP server on every host address that answers 'pong:<what it got>'."""
    with tcp_server("0.0.0.0", lambda data: b"pong:" + data) as port:
        yield port


def test_no_capabilities_own_pid_namespace_and_no_host_files(make_sandbox: MakeSandbox, canary: Path) -> None:
    sandbox = make_sandbox("docker")

    status = run(sandbox.exec("grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; ls /proc | grep -c '^[0-9]'"))
    reads = [run(sandbox.exec(["cat", str(path)])) for path in (canary, Path("/etc/shadow"))]

    assert all(line.split()[1] == "0000000000000000" for line in status.stdout.splitlines()[:3])
    assert int(status.stdout.splitlines()[-1]) <= 8  # init, its sleep, the helper, the shell, grep, ls
    assert all(r.exit_code != 0 and "canary" not in r.stdout for r in reads)


@pytest.mark.parametrize(
    "attack",
    [
        "mount -o remount,rw /coder_eval/tools",
        "umount /proc",
        "echo hacked > /proc/sys/kernel/hostname",
        "unshare -U -r true",
        "chown nobody /coder_eval/home",
    ],
)
def test_root_escapes_fail(make_sandbox: MakeSandbox, attack: str) -> None:
    sandbox = make_sandbox("docker")

    result = run(sandbox.exec(attack))

    assert result.exit_code != 0, result.output


def test_what_the_harness_binds_in_is_read_only(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker")
    targets = [*(str(folder) for folder in interpreter_folders()), "/coder_eval/tools", "/coder_eval/bin"]

    writes = [run(sandbox.exec(["touch", f"{target}/planted"])) for target in targets]
    own = run(sandbox.exec('touch made "$HOME/h" "$TMPDIR/t" /tmp/t'))

    assert all(result.exit_code != 0 for result in writes), [r.output for r in writes]
    assert own.exit_code == 0 and run(sandbox.read_file("made")) == b""


def test_network_none_reaches_nothing(make_sandbox: MakeSandbox, echo_server: int) -> None:
    sandbox = make_sandbox("docker", network="none")

    for host in ("127.0.0.1", _gateway()):
        result = run(sandbox.exec(["python", "-c", CONNECT, host, str(echo_server)]))
        assert result.exit_code != 0 and "pong" not in result.stdout


def test_bridge_reaches_out_but_not_the_hosts_loopback(make_sandbox: MakeSandbox, echo_server: int) -> None:
    sandbox = make_sandbox("docker", docker={"network": "bridge"})
    gateway = run(sandbox.exec(["python", "-c", _ROUTE])).stdout.strip()

    outside = run(sandbox.exec(["python", "-c", CONNECT, gateway, str(echo_server)]))
    loopback = run(sandbox.exec(["python", "-c", CONNECT, "127.0.0.1", str(echo_server)]))

    assert sandbox.spec.network == "host"
    assert outside.stdout == "pong:ping\n" and loopback.exit_code != 0


_ROUTE = (
    "import socket, struct\n"
    "for line in open('/proc/net/route').read().splitlines()[1:]:\n"
    "    f = line.split()\n"
    "    if f[1] == '00000000': print(socket.inet_ntoa(struct.pack('<L', int(f[2], 16))))"
)


def _gateway() -> str:
    done = subprocess.run(
        ["docker", "network", "inspect", "bridge", "--format", "{{(index .IPAM.Config 0).Gateway}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "172.17.0.1"


def test_network_model_reaches_the_model_endpoint_and_nothing_else(
    make_sandbox: MakeSandbox, echo_server: int
) -> None:
    sandbox = make_sandbox("docker", provision=Provision(network="model", model_port=echo_server))

    assert through_model_route(sandbox, echo_server, env_names=["PATH"]) == ("pong:ping\nother refused\n", 0)


def test_memory_limit_kills_a_greedy_process_and_is_reported(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker", limits=Limits(max_memory_mb=64))

    result = run(sandbox.exec(["python", "-c", "x = bytearray(256 * 1024 * 1024); print('allocated')"]))
    run(sandbox.stop())

    assert result.exit_code == 137 and "allocated" not in result.stdout
    assert sandbox.oom_killed()


def test_a_sandbox_within_its_memory_is_not_reported(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker", limits=Limits(max_memory_mb=256))

    run(sandbox.exec(["python", "-c", "x = bytearray(16 * 1024 * 1024)"]))
    run(sandbox.stop())

    assert not sandbox.oom_killed()


def test_process_limit_stops_a_fork_bomb(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker", limits=Limits(max_pids=16))

    result = run(sandbox.exec("for i in $(seq 40); do sleep 1 & done; wait; echo done", timeout=30))

    assert "fork" in result.stderr.lower() or "resource" in result.stderr.lower(), result.output


def test_cpu_quota_throttles_a_busy_container(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker", limits=Limits(max_cpus=0.25))
    spin = "import time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end: pass"

    run(sandbox.exec(["python", "-c", spin]))
    quota = run(sandbox.exec("cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.stat")).stdout

    assert quota.split()[0] == "25000"  # of a 100000 µs period
    throttled = dict(line.split() for line in quota.splitlines()[1:])
    assert int(throttled["nr_throttled"]) > 0


def test_file_size_and_cpu_time_limits(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker", limits=Limits(max_disk_mb=1, max_cpu_seconds=1))

    big = run(sandbox.exec("head -c 3000000 /dev/zero > big.bin; stat -c %s big.bin"))
    spin = run(sandbox.exec(["python", "-c", "while True: pass"], timeout=20))

    assert big.exit_code == 0 and int(big.stdout) <= 1024 * 1024
    assert spin.exit_code != 0 and not spin.timed_out and spin.duration_s < 10


def test_working_dir_env_passthrough_and_mounts(
    make_sandbox: MakeSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODER_EVAL_TEST_TOKEN", "passed")
    monkeypatch.setenv("CODER_EVAL_TEST_OTHER", "kept out")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "f.txt").write_text("shared\n")
    options = {
        "working_dir": "/app",
        "env_passthrough": ["CODER_EVAL_TEST_TOKEN", "NOT_SET_ANYWHERE"],
        "extra_mounts": [f"{tmp_path / 'data'}:/data"],
    }
    sandbox = make_sandbox("docker", docker=options)

    seen = run(sandbox.exec("pwd; echo $CODER_EVAL_TEST_TOKEN $CODER_EVAL_TEST_OTHER; cat /data/f.txt"))
    planted = run(sandbox.exec("touch /data/planted"))

    assert seen.stdout == "/app\npassed\nshared\n" and sandbox.workdir == "/app"
    assert planted.exit_code != 0 and not (tmp_path / "data" / "planted").exists()


def test_the_verifier_gets_read_only_task_folders(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "expected.txt").write_text("42\n")
    provision = Provision(role="verifier", trusted=True, mounts=(Mount(tmp_path / "task", "TASK_DIR"),))
    sandbox = make_sandbox("docker", provision=provision)

    shown = run(sandbox.exec('cat "$TASK_DIR/expected.txt"; touch "$TASK_DIR/x"'))

    assert shown.stdout == "42\n" and shown.exit_code != 0
    assert sandbox.env["CODER_EVAL_VERDICTS"] == "/coder_eval/verdicts"
    assert not (tmp_path / "task" / "x").exists()


def test_nothing_a_grader_s_command_started_outlives_it_in_the_verifier(
    make_sandbox: MakeSandbox,
) -> None:
    sandbox = make_sandbox("docker", provision=Provision(role="verifier", trusted=True))
    late = "sleep 1; echo forged > late.txt"

    run(sandbox.exec(f"setsid env -i /bin/sh -c '{late}' > /dev/null 2>&1 < /dev/null & sleep 0.3"))
    run(sandbox.exec("sleep 1.5"))

    assert run(sandbox.glob("*")) == []


def test_orphans_are_reaped(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker")

    run(sandbox.exec("for i in 1 2 3; do (sleep 0.1 &) ; done"))
    run(sandbox.exec("sleep 0.5"))

    assert run(sandbox.exec("ps -eo stat= | grep -c '^Z'")).stdout.strip() == "0"


def test_a_judges_copy_is_read_only(make_sandbox: MakeSandbox) -> None:
    seed = StarterFiles(files=[StarterFile(path="app.py", content="x = 1\n")])
    sandbox = make_sandbox(
        "docker", provision=Provision(role="judge", sources=(seed,), read_only_workspace=True)
    )

    assert run(sandbox.read_file("app.py")) == b"x = 1\n"
    assert run(sandbox.exec("echo y >> app.py")).exit_code != 0
    with pytest.raises(SandboxError):
        run(sandbox.write_file("new.txt", "no"))


def test_absolute_paths_stay_in_the_sandbox_s_own_folders(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("docker")
    home = sandbox.env["HOME"]

    run(sandbox.write_file(f"{home}/.config/tool.json", "{}"))

    assert run(sandbox.read_file(f"{home}/.config/tool.json")) == b"{}"
    assert run(sandbox.glob(f"{home}/.config/*.json")) == [f"{home}/.config/tool.json"]
    with pytest.raises(WorkspaceFileError):
        run(sandbox.read_file("/etc/passwd"))


def test_close_removes_the_container_and_a_dead_harness_s_leftovers_are_reaped(
    make_sandbox: MakeSandbox,
) -> None:
    closed, orphan = make_sandbox("docker"), make_sandbox("docker")
    owner = host_folder(orphan) / OWNER_FILE
    owner.write_text(json.dumps({**json.loads(owner.read_text()), "pid": 2**22 + 7, "started": 1}))

    run(closed.close())
    reaped, problems = reap_dead(host_folder(orphan).parent)  # the folder both sandboxes were made in

    assert not container_exists(closed.name) and not host_folder(closed).exists()
    assert (reaped, problems) == (1, []) and not container_exists(orphan.name)


def test_a_task_dockerfile_is_built_once_and_again_when_it_changes(tmp_path: Path) -> None:
    context = tmp_path / "env"
    context.mkdir()
    (context / "Dockerfile").write_text(
        "FROM coder-eval/base\nARG GREETING\nCOPY hello.txt /opt/\nRUN echo $GREETING >> /opt/hello.txt\n"
    )
    (context / "hello.txt").write_text("hello\n")
    (context / "nonce").write_text(uuid.uuid4().hex)  # a context no earlier run built
    spec = DockerSpec(
        docker={"dockerfile_path": str(context / "Dockerfile"), "build": {"args": {"GREETING": "hi"}}}
    )

    try:
        first = _made_from(spec, tmp_path)
        again = _made_from(spec, tmp_path)
        (context / "hello.txt").write_text("changed\n")
        changed = _made_from(spec, tmp_path)
    finally:
        subprocess.run(["docker", "rmi", "--force", *set(_built)], capture_output=True, check=False)

    assert first == again and first[1] == "hello\nhi\n"
    assert changed[0] != first[0] and changed[1] == "changed\nhi\n"


_built: list[str] = []


def _made_from(spec: DockerSpec, base: Path) -> tuple[str, str]:
    """The image a sandbox of ``spec`` started from, and /opt/hello.txt in it."""

    async def scenario() -> tuple[str, str]:
        sandbox = await DockerSandbox.create(spec, Provision(), base_dir=base)
        try:
            image = subprocess.run(
                ["docker", "inspect", "--format", "{{.Config.Image}}", sandbox.name],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            _built.append(image)
            return image, (await sandbox.exec("cat /opt/hello.txt")).stdout
        finally:
            await sandbox.close()

    return run(scenario())


def test_paths_left_out_of_the_build_never_reach_the_image(tmp_path: Path) -> None:
    context = tmp_path / "task"
    (context / "tests").mkdir(parents=True)
    (context / "tests" / "test_secret.py").write_text("SECRET = 1\n")
    (context / "solution.sh").write_text("echo the answer\n")
    (context / "data.txt").write_text(uuid.uuid4().hex)  # a context no earlier run built
    (context / "Dockerfile").write_text("FROM coder-eval/base\nCOPY . /ctx/\n")
    options = {"dockerfile_path": str(context / "Dockerfile"), "build": {"exclude": ["tests", "solution.sh"]}}

    async def listing() -> str:
        sandbox = await DockerSandbox.create(DockerSpec(docker=options), Provision(), base_dir=tmp_path)
        try:
            _built.append(subprocess.run(
                ["docker", "inspect", "--format", "{{.Config.Image}}", sandbox.name],
                capture_output=True, text=True, check=True,
            ).stdout.strip())  # fmt: skip
            return (await sandbox.exec("ls -A /ctx")).stdout
        finally:
            await sandbox.close()

    try:
        seen = run(listing())
    finally:
        subprocess.run(["docker", "rmi", "--force", *set(_built)], capture_output=True, check=False)

    assert seen.split() == ["Dockerfile", "data.txt"]


def test_the_verifier_s_workspace_is_the_snapshot_not_the_image_s(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "Dockerfile").write_text(
        f"FROM coder-eval/base\nRUN mkdir /workspace && echo {uuid.uuid4().hex} > /workspace/from_image.txt\n"
    )
    spec = DockerSpec(docker={"dockerfile_path": str(tmp_path / "env" / "Dockerfile")})

    async def scenario() -> tuple[list[str], list[str]]:
        agent = await DockerSandbox.create(spec, Provision(), base_dir=tmp_path)
        try:
            seen = await agent.glob("*")
            await agent.exec("rm from_image.txt && echo mine > mine.txt")
            with (tmp_path / "work.tar").open("wb") as out:
                await agent.snapshot(out)
        finally:
            await agent.close()
        verifier = await DockerSandbox.create(
            spec, Provision(snapshot=tmp_path / "work.tar"), base_dir=tmp_path
        )
        try:
            return seen, await verifier.glob("*")
        finally:
            await verifier.close()
            subprocess.run(["docker", "rmi", "--force", _image_of(spec)], capture_output=True, check=False)

    assert run(scenario()) == (["from_image.txt"], ["mine.txt"])


def _image_of(spec: DockerSpec) -> str:
    return f"coder-eval/task:{build_hash(Path(spec.docker.dockerfile_path or ''), {}, [])[:16]}"


def test_image_problems_are_clear_errors_and_nothing_is_pulled(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM registry.example/not-here:1\n")

    with pytest.raises(SandboxError, match="never pulls"):
        run(DockerSandbox.create(DockerSpec(docker={"image": "not-here/anywhere:1"}), Provision()))
    with pytest.raises(SandboxError, match=r"building .* failed"):
        run(
            DockerSandbox.create(
                DockerSpec(docker={"dockerfile_path": str(tmp_path / "Dockerfile")}), Provision()
            )
        )


def test_a_missing_engine_is_a_clear_error_at_create(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import coder_eval.sandbox.docker.engine as engine

    monkeypatch.setattr(engine.shutil, "which", lambda name, *args, **kwargs: None)

    with pytest.raises(SandboxError, match="'docker' is unavailable: docker is not installed"):
        run(DockerSandbox.create(DockerSpec(), Provision(), base_dir=tmp_path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("block", "error"),
    [
        ({"network": "none", "docker": {"network": "bridge"}}, "disagree"),
        ({"docker": {"image": "a", "dockerfile_path": "Dockerfile"}}, "not both"),
        ({"docker": {"build": {"secrets": {"token": "x"}}}}, "BuildKit"),
        ({"docker": {"working_dir": "app"}}, "absolute folder"),
        ({"docker": {"working_dir": "/coder_eval/x"}}, "harness's own folder"),
        ({"docker": {"extra_mounts": ["only-one-part"]}}, "SOURCE:TARGET"),
        ({"docker": {"registry": "x"}}, "Extra inputs"),
    ],
)
def test_bad_docker_blocks_are_refused_by_name(block: dict[str, object], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        TypeAdapter(SandboxSpec).validate_python({"driver": "docker", **block})


def test_the_original_spelling_loads() -> None:
    spec = TypeAdapter(SandboxSpec).validate_python(
        {
            "driver": "docker",
            "docker": {"network": "bridge", "working_dir": "/work", "extra_mounts": ["d:/d:rw"]},
        }
    )

    assert isinstance(spec, DockerSpec) and spec.network == "host"
    assert spec.docker.extra_mounts[0].read_only is False and spec.docker.working_dir == "/work"


def test_an_agent_killed_at_the_memory_limit_fails_and_is_not_invalid(tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(
        "task_id: greedy\ninitial_prompt: Use memory.\n"
        "agent: {kind: command, command: \"python -c 'x = bytearray(512 * 1024 * 1024)'\"}\n"
        "sandbox: {driver: docker, limits: {max_memory_mb: 96}}\n"
        "success_criteria: [{type: file_exists, path: done.txt}]\n"
    )
    (spec,) = load_tasks([task])

    end = asyncio.run(run_episode(EpisodePlan(spec), "oom", tmp_path / "episode.jsonl"))

    assert (end.outcome, end.status) == ("fail", "resource_limit"), end.error
    assert "memory limit (96 MB)" in (end.error or "")
