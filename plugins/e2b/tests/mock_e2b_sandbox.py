# mock_e2b_sandbox.py: the host side of the E2B stand-in's sandboxes (see mock_e2b.py): the
# Sandbox (a bubblewrap process tree running mock_e2b_agent.py), the Launcher that forks every
# bwrap, process counting through /proc, and the shared registry: CFG (the mock's settings,
# filled in by mock_e2b.main) and STATE (sandboxes, deleted/expired ids, faults, requests).
import argparse
import collections
import contextlib
import datetime
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time

import mock_e2b_agent

AGENT_HOST_FILE = os.path.abspath(mock_e2b_agent.__file__)
AGENT_FILE = "/opt/envd/mock_e2b_agent.py"  # where AGENT_HOST_FILE is bound in a sandbox
AGENT_SOCK = "/run/envd/agent.sock"


def rfc3339(t):
    dt = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def proc_table():
    """pid -> (ppid, comm, state, cmdline) for every process on the host."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                raw = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        table[int(name)] = (int(fields[1]), comm, fields[0], cmdline)
    return table


def descendants(root, table):
    children = collections.defaultdict(list)
    for pid, info in table.items():
        children[info[0]].append(pid)
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


class Launcher:
    """Forks from one long-lived thread: bwrap's --die-with-parent (PDEATHSIG)
    fires when the *thread* that forked it ends, e.g. a finished HTTP handler."""

    def __init__(self):
        self.jobs = queue.Queue()
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            argv, kwargs, box, done = self.jobs.get()
            try:
                box.append(subprocess.Popen(argv, **kwargs))
            except OSError as e:
                box.append(e)
            done.set()

    def popen(self, argv, **kwargs):
        box, done = [], threading.Event()
        self.jobs.put((argv, kwargs, box, done))
        done.wait()
        if isinstance(box[0], OSError):
            raise box[0]
        return box[0]


class Sandbox:
    def __init__(self, template, timeout, metadata, env_vars, secure, internet):
        self.id = "i" + secrets.token_hex(8)
        self.template, self.metadata, self.env_vars = template, metadata, env_vars
        self.secure, self.internet = secure, internet
        self.token = secrets.token_hex(16) if secure else None
        self.started = time.time()
        self.end = self.started + timeout
        self.dir = os.path.join(CFG.state_root, self.id)
        self.sock_path = os.path.join(self.dir, "run", "agent.sock")
        self.lock = threading.Lock()
        self.streams = set()
        self.killed = False
        self.popen = None

    def bwrap_argv(self):
        a = ["/usr/bin/bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc",
             "--unshare-uts", "--unshare-cgroup-try"]
        if not self.internet:
            a.append("--unshare-net")
        a += ["--ro-bind", "/usr", "/usr"]
        for name in ("bin", "sbin", "lib", "lib64"):
            host = "/" + name
            if os.path.islink(host):
                a += ["--symlink", os.readlink(host), host]
            elif os.path.isdir(host):
                a += ["--ro-bind", host, host]
        a += ["--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
              "--perms", "1777", "--tmpfs", "/tmp", "--perms", "0755", "--dir", "/home/user",
              "--perms", "0700", "--dir", "/root",
              "--bind", os.path.join(self.dir, "run"), "/run/envd",
              "--ro-bind", AGENT_HOST_FILE, AGENT_FILE]
        for path in CFG.expose:
            a += ["--ro-bind", path, path]
        return a + ["--", "/usr/bin/python3", AGENT_FILE, "--agent", AGENT_SOCK,
                    "--run-as-uid", str(CFG.run_as_uid)]

    def start(self):
        os.makedirs(os.path.join(self.dir, "run"), mode=0o755)
        with open(os.path.join(self.dir, "bwrap.log"), "wb") as log:
            self.popen = CFG.launcher.popen(self.bwrap_argv(), stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                break
            try:
                self.connect().close()
                return
            except OSError:
                time.sleep(0.02)
        with open(os.path.join(self.dir, "bwrap.log"), "rb") as f:
            why = f.read().decode(errors="replace").strip()
        self.kill()
        raise RuntimeError("sandbox did not start: " + (why or "agent not listening"))

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.sock_path)
        except OSError:
            s.close()
            raise
        return s

    def kill(self):
        with self.lock:
            if self.killed:
                return
            self.killed = True
            streams = list(self.streams)
        if self.popen is not None:
            tree = descendants(self.popen.pid, proc_table())
            for pid in tree:        # the inner bwrap is pid 1 of the namespace: all die
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=2)  # the outer bwrap reaps the inner one, exits
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()
        for q in streams:
            q.put(None)             # cut every open Start stream
        shutil.rmtree(self.dir, ignore_errors=True)

    def live_commands(self):
        """The command lines of the sandbox's live processes (not bwrap, not the agent)."""
        if self.killed or self.popen is None:
            return []
        table = proc_table()
        return [table[pid][3].strip() for pid in descendants(self.popen.pid, table)
                if table[pid][1] != "bwrap" and table[pid][2] != "Z"
                and AGENT_FILE + " --agent" not in table[pid][3]]

    def summary(self):
        return {"sandboxID": self.id, "templateID": self.template, "metadata": self.metadata,
                "startedAt": rfc3339(self.started), "endAt": rfc3339(self.end),
                "state": "running"}


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.sandboxes = {}
        self.deleted = []
        self.expired = []
        self.faults = {}
        self.requests = collections.deque(maxlen=500)

    def get(self, sid):
        with self.lock:
            return self.sandboxes.get(sid)

    def take(self, sid):
        with self.lock:
            return self.sandboxes.pop(sid, None)

    def kill_all(self):
        with self.lock:
            victims = list(self.sandboxes.values())
            self.sandboxes.clear()
        for sb in victims:
            sb.kill()

    def reap_forever(self):
        while True:
            time.sleep(0.2)
            now = time.time()
            with self.lock:
                due = [sb for sb in self.sandboxes.values() if sb.end <= now]
                for sb in due:
                    del self.sandboxes[sb.id]
                    self.expired.append(sb.id)
            for sb in due:
                sb.kill()


CFG = argparse.Namespace()
STATE = State()
