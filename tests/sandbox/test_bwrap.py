"""bubblewrap as a real boundary: namespaces, no capabilities, a minimal root, network modes, limits."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox import BwrapSandbox, BwrapSpec, Provision
from coder_eval.sandbox.cgroups import Cgroup
from coder_eval.sandbox.spec import Limits

from .builders import needs_bwrap, run, tcp_server, through_model_route
from .conftest import MakeSandbox

pytestmark = needs_bwrap

REPO = Path(__file__).resolve().parents[2]
CONNECT = (
    "import socket, sys\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\n"
    "s.sendall(b'ping'); print(s.recv(100).decode())"
)


@pytest.fixture
def echo_server() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1 that answers 'pong:<what it got>'."""
    with tcp_server("127.0.0.1", lambda data: b"pong:" + data) as port:
        yield port


def test_no_capabilities_and_own_namespaces(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("bwrap")

    status = run(
        sandbox.exec("grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; ls /proc | grep -c '^[0-9]'")
    ).stdout

    assert all(line.split()[1] == "0000000000000000" for line in status.splitlines()[:3])
    assert int(status.splitlines()[-1]) <= 5  # only the sandbox's own processes are visible


@pytest.mark.parametrize(
    "attack",
    [
        "mount -o remount,rw /",
        "mount -o remount,rw /usr",
        "umount /tmp",
        "umount /proc",
        "echo hacked > /proc/sys/kernel/hostname",
        "unshare -U -r true",
        "touch /usr/escape",
    ],
)
def test_root_escapes_fail(make_sandbox: MakeSandbox, attack: str) -> None:
    sandbox = make_sandbox("bwrap")

    result = run(sandbox.exec(attack))

    assert result.exit_code != 0, result.output
    assert not Path("/usr/escape").exists()


def test_the_hosts_homes_checkout_and_other_sandboxes_are_invisible(
    make_sandbox: MakeSandbox, canary: Path
) -> None:
    neighbour = make_sandbox("bwrap")
    run(neighbour.write_file("theirs.txt", "neighbour secret"))
    sandbox = make_sandbox("bwrap")

    for path in (canary, REPO / "README.md", Path(neighbour.workdir) / "theirs.txt", Path("/etc/shadow")):
        result = run(sandbox.exec(["cat", str(path)]))
        assert result.exit_code != 0 and "secret" not in result.stdout, path
    interpreter = {p.relative_to("/root").parts[0] for p in _interpreter() if p.is_relative_to("/root")}
    assert set(run(sandbox.exec("ls -A /root 2>/dev/null")).stdout.split()) <= interpreter
    assert run(sandbox.exec("ls -A /home 2>/dev/null")).stdout == ""


def _interpreter() -> list[Path]:
    from coder_eval.sandbox.bwrap import interpreter_folders

    return interpreter_folders()


def test_workspace_and_home_are_writable_and_nothing_else(make_sandbox: MakeSandbox, canary: Path) -> None:
    sandbox = make_sandbox("bwrap")

    inside = run(sandbox.exec("touch made && touch $HOME/h && touch $TMPDIR/t && touch /tmp/t"))
    outside = run(sandbox.exec(["touch", str(canary.parent / "escaped")]))

    assert inside.exit_code == 0 and (Path(sandbox.workdir) / "made").exists()
    assert outside.exit_code != 0 and not (canary.parent / "escaped").exists()


def test_network_none_reaches_nothing(make_sandbox: MakeSandbox, echo_server: int) -> None:
    sandbox = make_sandbox("bwrap", network="none")

    result = run(sandbox.exec(["python", "-c", CONNECT, str(echo_server)]))

    assert result.exit_code != 0 and "pong" not in result.stdout


def test_network_host_reaches_the_host(make_sandbox: MakeSandbox, echo_server: int) -> None:
    sandbox = make_sandbox("bwrap", network="host")

    assert run(sandbox.exec(["python", "-c", CONNECT, str(echo_server)])).stdout == "pong:ping\n"


def test_network_model_reaches_the_model_endpoint_and_nothing_else(
    make_sandbox: MakeSandbox, echo_server: int
) -> None:
    sandbox = make_sandbox("bwrap", provision=Provision(network="model", model_port=echo_server))

    assert through_model_route(sandbox, echo_server) == ("pong:ping\nother refused\n", 0)


def test_memory_limit_kills_a_greedy_process(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("bwrap", limits=Limits(max_memory_mb=64))

    result = run(sandbox.exec(["python", "-c", "x = bytearray(256 * 1024 * 1024); print('allocated')"]))

    assert result.exit_code != 0 and "allocated" not in result.stdout
    if sandbox.cgroup is not None:
        assert sandbox.oom_killed()


def test_process_limit_stops_a_fork_bomb(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("bwrap", limits=Limits(max_pids=16))

    result = run(sandbox.exec("for i in $(seq 40); do sleep 5 & done; wait; echo done", timeout=30))

    assert "fork" in result.stderr.lower() or "resource" in result.stderr.lower(), result.output


def test_file_size_and_cpu_time_limits(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox("bwrap", limits=Limits(max_disk_mb=1, max_cpu_seconds=1))

    big = run(sandbox.exec("head -c 3000000 /dev/zero > big.bin"))
    spin = run(sandbox.exec(["python", "-c", "while True: pass"], timeout=20))

    assert big.exit_code != 0 and (Path(sandbox.workdir) / "big.bin").stat().st_size <= 1024 * 1024
    assert spin.exit_code != 0 and not spin.timed_out and spin.duration_s < 10


def test_a_missing_bwrap_is_a_clear_error_at_create(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import coder_eval.sandbox.bwrap as bwrap

    monkeypatch.setattr(bwrap.shutil, "which", lambda name, *args, **kwargs: None)

    with pytest.raises(SandboxError, match="'bwrap' is unavailable: bwrap is not installed"):
        run(BwrapSandbox.create(BwrapSpec(), Provision(), base_dir=tmp_path))

    assert list(tmp_path.iterdir()) == []


def test_cgroups_where_the_machine_allows_them() -> None:
    group = Cgroup.make(f"probe-{os.getpid()}", Limits(max_pids=8))
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (not root, or no delegation)")
    try:
        assert group.pids() == set()
    finally:
        group.remove()


def test_a_python_installed_under_tmp_stays_visible_and_read_only(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout (and its virtualenv) under /tmp must survive the sandbox's fresh /tmp."""
    prefix = Path(tempfile.mkdtemp(prefix="coder_eval-venv-", dir="/tmp"))
    try:
        (prefix / "marker").write_text("still here\n")
        monkeypatch.setattr(sys, "prefix", str(prefix))
        sandbox = make_sandbox("bwrap")
        shown = run(sandbox.exec(["cat", str(prefix / "marker")]))
        written = run(sandbox.exec(["touch", str(prefix / "new")]))
    finally:
        shutil.rmtree(prefix)
    assert (shown.exit_code, shown.stdout) == (0, "still here\n")
    assert written.exit_code != 0


ETC_LISTING = r"""
import hashlib, os, stat, sys
def show(path, name):
    if os.path.islink(path) and (os.path.realpath(path).startswith("/proc/") or not os.path.exists(path)):
        print(name, "link", os.readlink(path))  # the reader's own /proc (its content is its own), or nowhere
    elif os.path.isdir(path):
        mode = os.stat(path).st_mode
        print(name, "folder", oct(stat.S_IMODE(mode)))
        if mode & stat.S_IROTH and mode & stat.S_IXOTH:  # what others may not read is staged empty
            for entry in sorted(os.listdir(path)):
                show(os.path.join(path, entry), name + "/" + entry)
    elif os.path.isfile(path):
        if os.stat(path).st_mode & stat.S_IROTH:
            print(name, "file", hashlib.sha256(open(path, "rb").read()).hexdigest())
        else:
            print(name, "unreadable file")
    else:
        print(name, "missing")
for name in sys.argv[1:]:
    show(os.path.join("/etc", name), name)
print("others", sorted(set(os.listdir("/etc")) - set(sys.argv[1:])))
"""


def test_etc_holds_the_listed_entries_as_the_host_has_them_and_nothing_else(
    make_sandbox: MakeSandbox,
) -> None:
    """``/etc`` is one staged copy bound whole: what a command reads there, down every folder, is the
    host's (a file's content, a folder's entries and mode), and nothing more; a folder other users
    may not read is there, empty."""
    from coder_eval.sandbox.bwrap import ETC_FILES

    sandbox = make_sandbox("bwrap")
    argv = ["python", "-I", "-c", ETC_LISTING, *ETC_FILES]
    inside = run(sandbox.exec(argv)).stdout
    host = subprocess.run(
        [sys.executable, "-I", "-c", ETC_LISTING, *ETC_FILES], capture_output=True, text=True
    )

    expected = host.stdout.splitlines()
    assert inside.splitlines()[:-1] == expected[:-1]
    assert inside.splitlines()[-1] == "others []"
    assert "missing" not in " ".join(line.split()[1] for line in expected[:3])  # the host has passwd ...
    assert len(expected) > len(ETC_FILES)  # folders were walked (the host's ssl holds files)


def test_a_folder_others_may_not_read_is_staged_empty_and_a_folder_that_holds_itself_is_bound(
    tmp_path: Path,
) -> None:
    from coder_eval.sandbox.bwrap import _stage

    source = tmp_path / "ssl"
    (source / "private").mkdir(parents=True)
    (source / "private" / "key.pem").write_text("secret")
    (source / "private").chmod(0o710)
    (source / "certs").mkdir()
    (source / "certs" / "a.pem").write_text("cert")
    (source / "certs" / "a.0").symlink_to("a.pem")
    (source / "certs" / "gone").symlink_to("/nowhere/at/all")
    (source / "certs" / "env").symlink_to("/usr/bin/env")
    (source / "key").write_text("k")
    (source / "key").chmod(0o600)

    _stage(source, tmp_path / "staged")

    staged = tmp_path / "staged"
    assert list((staged / "private").iterdir()) == []
    assert stat.S_IMODE((staged / "private").stat().st_mode) == 0o710
    assert (staged / "certs" / "a.pem").read_text() == "cert"
    assert (staged / "certs" / "a.0").read_text() == "cert"  # a copy of the file it names
    assert not (staged / "certs" / "a.0").is_symlink()
    assert (staged / "certs" / "env").readlink() == Path("/usr/bin/env")  # a sandbox sees /usr
    assert (staged / "certs" / "gone").readlink() == Path("/nowhere/at/all")
    assert (staged / "key").stat().st_size == 0 and stat.S_IMODE((staged / "key").stat().st_mode) == 0o600
    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "again").symlink_to(loop)
    with pytest.raises(OSError, match="holds itself"):
        _stage(loop, tmp_path / "staged-loop")


def test_etc_is_bound_in_one_mount(make_sandbox: MakeSandbox) -> None:
    from coder_eval.sandbox.bwrap import etc_mounts, staged_etc

    mounts = etc_mounts()

    assert mounts == ["--ro-bind", str(staged_etc()), "/etc"]
    sandbox = make_sandbox("bwrap")
    run(sandbox.exec("true"))
    assert staged_etc() == Path(mounts[1])  # made once per process, reused by every command


def test_the_interpreter_is_shown_by_its_outermost_folders() -> None:
    from coder_eval.sandbox.bwrap import interpreter_folders

    folders = interpreter_folders()

    assert not [f for f in folders for o in folders if f != o and f.is_relative_to(o)]
    for needed in (
        Path(sys.executable).resolve(),
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
    ):
        assert needed.is_relative_to("/usr") or any(needed.is_relative_to(f) for f in folders), needed


STAGE_AND_EXIT = r"""
import os, signal, sys
from coder_eval.sandbox.bwrap import staged_etc
print(staged_etc().parent, flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("how", ["exits", "killed"])
def test_the_staged_etc_is_removed_at_exit_or_by_the_next_reaper(how: str, short_tmp: Path) -> None:
    from coder_eval.sandbox.leftovers import reap_dead

    done = subprocess.run(
        [sys.executable, "-c", STAGE_AND_EXIT, how],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TMPDIR": str(short_tmp)},  # its own root, where no other test reaps
    )
    base = Path(done.stdout.strip())
    assert base.parent == short_tmp and base.name.startswith("coder_eval-etc-"), done.stderr
    if how == "killed":
        assert base.is_dir()  # no exit handler ran
        assert reap_dead(short_tmp) == (0, [])  # removed, but it was no sandbox: none is counted
    assert not base.exists()


def test_a_system_program_runs_without_env_and_any_other_through_it(make_sandbox: MakeSandbox) -> None:
    """``env`` is there to report a program that is not found as 127; the host's programs under
    ``/usr`` are found, and run without it (an exec fewer per command)."""
    from coder_eval.sandbox.bwrap import system_program

    assert system_program("/bin/bash") and system_program("/usr/bin/env")
    assert not system_program("bash")  # looked up on the sandbox's PATH: env reports it when missing
    assert not system_program("/usr/bin/no-such-program")
    assert not system_program("/etc/passwd")  # not executable
    assert not system_program(sys.executable) or Path(sys.executable).resolve().is_relative_to("/usr")
    sandbox = make_sandbox("bwrap")

    line = sandbox.command(["/bin/bash", "-c", "exit 3"], cwd=sandbox.workdir)
    assert line[line.index("--", line.index("--chdir")) + 1] == "/bin/bash"
    other = sandbox.command(["no-such-program"], cwd=sandbox.workdir)
    assert other[other.index("--", other.index("--chdir")) + 1 :] == ["/usr/bin/env", "--", "no-such-program"]

    assert run(sandbox.exec("exit 3")).exit_code == 3
    assert run(sandbox.exec(["no-such-program"])).exit_code == 127
    assert run(sandbox.exec(["/usr/bin/no-such-program"])).exit_code == 127


def test_under_the_model_forwarder_no_command_needs_env(make_sandbox: MakeSandbox, echo_server: int) -> None:
    """With ``network: model`` the forwarder (the harness's own interpreter, shown in every sandbox)
    starts each command and reports one it cannot start as 127 itself: no ``env`` runs before it."""
    sandbox = make_sandbox("bwrap", provision=Provision(network="model", model_port=echo_server))

    line = sandbox.command(["no-such-program"], cwd=sandbox.workdir)
    started = line[line.index("--", line.index("--chdir")) + 1 :]
    assert started[:3] == [str(Path(sys.executable).absolute()), "-I", "-S"]
    assert "/usr/bin/env" not in started and started[-2:] == ["--", "no-such-program"]

    assert run(sandbox.exec(["no-such-program"])).exit_code == 127
    assert run(sandbox.exec("exit 3")).exit_code == 3
    assert through_model_route(sandbox, echo_server) == ("pong:ping\nother refused\n", 0)


def test_where_no_copy_of_etc_can_be_made_each_entry_is_bound(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coder_eval.sandbox import bwrap

    def refused(**_: object) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bwrap, "_staged", None)
    monkeypatch.setattr(bwrap, "_etc_mounts", None)
    monkeypatch.setattr(bwrap.tempfile, "mkdtemp", refused)

    mounts = bwrap.etc_mounts()

    assert mounts[:3] == ["--ro-bind", "/etc/passwd", "/etc/passwd"]
    assert len(mounts) == 3 * len([n for n in bwrap.ETC_FILES if (Path("/etc") / n).exists()])
    monkeypatch.undo()  # the sandbox's own folder is made with mkdtemp too
    monkeypatch.setattr(bwrap, "_etc_mounts", (os.getpid(), mounts))
    sandbox = make_sandbox("bwrap")
    assert run(sandbox.exec("grep -c root /etc/passwd")).exit_code == 0
