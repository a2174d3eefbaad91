"""The program a docker sandbox runs inside its container for each verb (stdlib only).

Example (what the docker driver runs; ``PY`` is the harness's Python, bound read-only)::

    docker exec C PY -I -S /coder_eval/tools/helper.py run /workspace . 60 capture own -- make test
    docker exec C PY -I -S /coder_eval/tools/helper.py read /workspace src/app.py -1
    docker exec -i C PY -I -S /coder_eval/tools/helper.py write /workspace notes.md 0 < data
    docker exec C PY -I -S /coder_eval/tools/helper.py glob /workspace /workspace '(?:.*/)?[^/]*\\.py' 0
    docker exec C PY -I -S /coder_eval/tools/helper.py kill 3f2a...

``init`` is the container's first process (it reaps orphans). ``run`` starts a command in ``cwd``
(kept inside the workspace) and, when it ends or times out, kills every process carrying its
``CODER_EVAL_EXEC`` marker (``own``), or every process in the container but those of the runs it
names (``all:<ids>``, the verifier's sweep, which also catches a process that dropped its
environment); in ``capture`` mode its output is read from pipes while it runs, capped there as on
the host (:data:`~coder_eval.sandbox.process.MAX_OUTPUT_BYTES` a stream, with the same note), and
sent when it ends, so a background process holding stdout cannot keep the ``docker exec`` open.
``read``, ``write`` and ``glob`` keep workspace-relative paths inside the workspace, and absolute
ones inside the workspace, the sandbox's own folders or a folder it shows at a fixed path
(listed in ``tools/shown``). Failures the harness must recognise exit with
:data:`REFUSED` and a line starting with :data:`PREFIX` on stderr.

The engine carries arguments as Unicode text, and would replace bytes that are not UTF-8 (a file
name, a folder, an argument of the agent's); :func:`helper_argv` sends such an argument as
:data:`ARG_PREFIX` and the base64 of its bytes, which the helper turns back into the same bytes.
"""

from __future__ import annotations

import base64

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import ExecResult
from coder_eval.sandbox.process import MAX_OUTPUT_BYTES

REFUSED = 125
"""Exit code of a refused request (a path leading out of the workspace, a missing file)."""
PREFIX = "coder_eval-helper: "
MARKER = "CODER_EVAL_EXEC"
"""Environment variable every process of one ``run`` carries (value: that run's id)."""
ARG_PREFIX = "coder_eval-bytes:"
"""An argument sent as its bytes in base64 (one that is not UTF-8, or starts with this prefix)."""

HELPER = r'''
import os, signal, stat, sys

REFUSED, PREFIX, MARKER, GRACE = 125, "coder_eval-helper: ", "CODER_EVAL_EXEC", 0.5
ARG_PREFIX, CAP = "coder_eval-bytes:", @CAP@


def argument(value):
    """An argument as the harness meant it (bytes that are not UTF-8 come base64-encoded)."""
    if not value.startswith(ARG_PREFIX):
        return value
    import base64

    return os.fsdecode(base64.b64decode(value[len(ARG_PREFIX):]))


def refuse(message):
    sys.stderr.write(PREFIX + message + "\n")
    sys.exit(REFUSED)


BASE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def within(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def shown():
    """The folders the sandbox shows at fixed paths (``/tests``), one a line in ``tools/shown``."""
    try:
        with open(os.path.join(BASE, "tools", "shown"), encoding="utf-8") as handle:
            return tuple(os.path.realpath(line) for line in handle.read().splitlines() if line)
    except OSError:
        return ()


def inside(workdir, path):
    """The real path of ``path``: a relative one must stay in the workspace, an absolute one in the
    workspace, a shown folder or the sandbox's own folders."""
    work = os.path.realpath(workdir)
    try:
        real = os.path.realpath(os.path.join(work, path))
    except RecursionError:  # a chain of links deeper than the interpreter follows
        refuse(f"{path!r} leads through links chained too deep to follow")
    roots = (work, BASE, *shown()) if path.startswith("/") else (work,)
    if not any(within(real, root) for root in roots):
        refuse(f"{path!r} resolves outside the sandbox ({real})")
    return real


def marked(value):
    """Pids of processes whose environment holds ``CODER_EVAL_EXEC=<value>``."""
    return {pid for pid, env in processes() if ("\0%s=%s\0" % (MARKER, value)).encode() in env}


def processes():
    """(pid, environment) of every process but the first and this one."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, os.getpid()):
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                yield int(name), b"\0" + handle.read()
        except OSError:
            yield int(name), b""


def unmarked(keep):
    """Pids of every process but those of the runs named in ``keep`` (a sweep of the container)."""
    needles = [("\0%s=%s\0" % (MARKER, value)).encode() for value in keep]
    return {pid for pid, env in processes() if not any(needle in env for needle in needles)}


def send(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def kill(find):
    """Freeze every process ``find()`` names until no new one appears, then SIGKILL them all."""
    frozen = set()
    for _ in range(50):
        new = find() - frozen
        if not new:
            break
        send(new, signal.SIGSTOP)
        frozen |= new
    send(frozen, signal.SIGKILL)


class Output:
    """A captured stream: a pipe read while the command runs; the first CAP bytes kept, the rest counted."""

    def __init__(self):
        self.source, self.sink = os.pipe()
        os.set_blocking(self.source, False)
        self.kept, self.total = bytearray(), 0

    def drain(self):
        while self.source >= 0:
            try:
                chunk = os.read(self.source, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                os.close(self.source)
                self.source = -1
                return
            self.total += len(chunk)
            room = CAP - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def result(self):
        self.drain()
        if self.total <= CAP:
            return bytes(self.kept)
        return bytes(self.kept) + b"\n[coder_eval: output cut at %d of %d bytes]" % (CAP, self.total)


def pump(proc, outputs, seconds):
    """Read ``outputs`` while ``proc`` runs, for at most ``seconds`` (None: no end); True once it exited."""
    import select, subprocess, time

    if not outputs:
        try:
            proc.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            return False
    end = None if seconds is None else time.monotonic() + seconds
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while proc.poll() is None:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return False
            fds = [o.source for o in outputs if o.source >= 0] + ([pidfd] if pidfd is not None else [])
            wait = left if pidfd is not None else min(0.01, left or 0.01)
            ready = select.select(fds, [], [], wait)[0]
            for output in outputs:
                if output.source in ready:
                    output.drain()
        return True
    finally:
        if pidfd is not None:
            os.close(pidfd)


class Relay:
    """``relay`` mode: the command's streams are Unix sockets this process copies to and from its own
    (a tool of the command cannot open them again through /proc), and this process is not dumpable
    (its own /proc/<pid>/fd is closed to processes without CAP_SYS_PTRACE)."""

    def __init__(self):
        import ctypes, socket

        try:
            ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
        except Exception:
            pass
        self.pairs = [socket.socketpair() for _ in range(3)]
        self.threads = []

    def start(self, argv):
        import socket, subprocess, threading

        ours = [pair[0] for pair in self.pairs]
        theirs = [pair[1] for pair in self.pairs]
        try:
            proc = subprocess.Popen(argv, stdin=theirs[0], stdout=theirs[1], stderr=theirs[2])
        finally:
            for sock in theirs:
                sock.close()
        feed = threading.Thread(
            target=copy, args=(0, ours[0].fileno(), lambda: ours[0].shutdown(socket.SHUT_WR)), daemon=True
        )
        feed.start()
        for n in (1, 2):
            thread = threading.Thread(target=copy, args=(ours[n].fileno(), n, lambda: None), daemon=True)
            thread.start()
            self.threads.append(thread)
        return proc

    def finish(self):
        for thread in self.threads:
            thread.join(5)


def copy(src, dst, done):
    try:
        while chunk := os.read(src, 65536):
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view):]
    except OSError:
        pass
    finally:
        done()


def run(workdir, cwd, timeout, mode, end, argv):
    import subprocess

    target = inside(workdir, cwd)
    if not os.path.isdir(target):
        refuse(f"cwd {cwd!r} is not a directory in the sandbox")
    os.chdir(target)
    value = os.environ.get(MARKER, "")
    outputs = [Output(), Output()] if mode == "capture" else []
    sinks = [o.sink for o in outputs] or [None, None]
    relay = Relay() if mode == "relay" else None
    try:
        if relay is not None:
            proc = relay.start(argv)
        else:
            proc = subprocess.Popen(argv, stdout=sinks[0], stderr=sinks[1])
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    finally:
        for output in outputs:
            os.close(output.sink)
    timed_out = not pump(proc, outputs, None if timeout <= 0 else timeout)
    if timed_out:
        send(marked(value), signal.SIGTERM)
        pump(proc, outputs, GRACE)
    if end.startswith("all:"):  # nothing else may run on: every process but the other runs' dies
        keep = [run_id for run_id in end[4:].split(",") if run_id]
        kill(lambda: unmarked(keep))
    elif value:
        kill(lambda: marked(value))
    code = proc.wait()
    if relay is not None:
        relay.finish()
    for output, stream in zip(outputs, (sys.stdout.buffer, sys.stderr.buffer)):
        stream.write(output.result())
    if timed_out:
        sys.stdout.flush()
        sys.stderr.write(PREFIX + "timed out\n")
        return 124
    return 128 - code if code < 0 else code


def measure(workdir, max_bytes, max_entries, max_depth, max_path):
    """Walk the workspace (a stack of folders, no recursion) counting entries and apparent sizes;
    print the counts at the first entry past a bound, or too deep, or too long a path (a negative
    bound is none), or ``{}``."""
    import json

    entries = total = 0
    pending = [(inside(workdir, "."), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            items = list(os.scandir(folder))
        except OSError:
            continue
        for item in items:
            name = prefix + item.name
            misshapen = 0 <= max_depth < name.count("/") + 1 or 0 <= max_path < len(os.fsencode(name))
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                info = None
            size = info.st_size if info is not None and stat.S_ISREG(info.st_mode) else 0
            entries, total = entries + (info is not None), total + size
            if misshapen or 0 <= max_entries < entries or 0 <= max_bytes < total:
                print(json.dumps({"name": name, "size": size, "entries": entries, "bytes": total}))
                return 0
            if info is not None and stat.S_ISDIR(info.st_mode):
                pending.append((item.path, name + "/"))
    print("{}")
    return 0


def read(workdir, path, limit):
    real = inside(workdir, path)
    if not os.path.isfile(real):
        refuse(f"{path!r} is not a file in the sandbox")
    with open(real, "rb") as handle:
        data = handle.read() if limit < 0 else handle.read(limit)
    sys.stdout.buffer.write(data)
    return 0


def write(workdir, path, executable):
    if os.path.basename(path) in ("", ".", ".."):
        refuse(f"{path!r} is not a file path")
    parent = inside(workdir, os.path.dirname(path) or ".")
    target = os.path.join(parent, os.path.basename(path))
    os.makedirs(parent, exist_ok=True)
    if os.path.islink(target):
        os.unlink(target)
    with open(target, "wb") as handle:
        while chunk := sys.stdin.buffer.read(1 << 20):
            handle.write(chunk)
    if executable:
        os.chmod(target, os.stat(target).st_mode | 0o111)
    return 0


def glob(workdir, root, pattern, links):
    """The entries under ``root`` whose relative path ``pattern`` matches (a stack of folders, no
    recursion; links listed when asked, never entered)."""
    import json, re

    root, regex, found = inside(workdir, root), re.compile(pattern), []
    if not os.path.isdir(root):
        print("[]")
        return 0
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            items = list(os.scandir(folder))
        except OSError:
            continue
        for item in items:
            rel = prefix + item.name
            try:
                mode = item.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            wanted = stat.S_ISREG(mode) or (links and stat.S_ISLNK(mode))
            if wanted and regex.fullmatch(rel):
                found.append(rel)
            if stat.S_ISDIR(mode):
                pending.append((item.path, rel + "/"))
    print(json.dumps(sorted(found)))
    return 0


def init():
    """The container's first process: reaps every orphan, forever (signals it has no handler for
    are ignored by the kernel for a namespace's first process)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        signal.sigtimedwait({signal.SIGCHLD}, 5)


def main(op, args):
    if op == "run":
        split = args.index("--")
        workdir, cwd, timeout, mode, end = args[:5]
        return run(workdir, cwd, float(timeout), mode, end, args[split + 1:])
    if op == "init":
        return init()
    if op == "read":
        return read(args[0], args[1], int(args[2]))
    if op == "write":
        return write(args[0], args[1], args[2] == "1")
    if op == "glob":
        return glob(args[0], args[1], args[2], args[3] == "1")
    if op == "measure":
        return measure(args[0], *(int(arg) for arg in args[1:5]))
    if op == "kill":
        kill(lambda: marked(args[0]))
        return 0
    refuse(f"unknown operation {op!r}")


sys.exit(main(sys.argv[1], [argument(value) for value in sys.argv[2:]]))
'''.replace("@CAP@", str(MAX_OUTPUT_BYTES))


def helper_argv(python: str, tools: str, *args: str) -> list[str]:
    """The command line of one helper operation inside the container (Python isolated, no site);
    an argument that is not UTF-8 text travels as its bytes (see the module docstring)."""
    return [python, "-I", "-S", f"{tools}/helper.py", *map(_argument, args)]


def _argument(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        if not value.startswith(ARG_PREFIX):
            return value
    return ARG_PREFIX + base64.b64encode(value.encode("utf-8", "surrogateescape")).decode()


def helper_result(result: ExecResult, cmd: object) -> ExecResult:
    """A command's result as ``run`` reported it; a refused ``cwd`` is a ``SandboxError``."""
    if result.exit_code == REFUSED and result.stderr.startswith(PREFIX):
        raise SandboxError(result.stderr.removeprefix(PREFIX).strip() + f" (running {cmd!r})")
    timed_out = result.timed_out or result.stderr.endswith(PREFIX + "timed out\n")
    stderr = result.stderr.removesuffix(PREFIX + "timed out\n")
    code = 124 if timed_out else result.exit_code
    return ExecResult(code, result.stdout, stderr, result.duration_s, timed_out)
