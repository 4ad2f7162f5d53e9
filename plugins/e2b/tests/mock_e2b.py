#!/usr/bin/env python3
# mock_e2b.py: a local stand-in for the E2B cloud, used by the e2b plugin's tests.
#
# What of the real service it reproduces, over plain HTTP/1.1 on 127.0.0.1:
#  * the control-plane REST API (api.e2b.dev): create, get, list (v2, metadata
#    filter), kill sandboxes, set a sandbox's timeout, list templates; X-API-Key
#    auth; {"code","message"} JSON errors; sandboxes expire at their end time;
#  * the in-sandbox daemon envd, routed the way E2B's proxy routes it (header
#    E2b-Sandbox-Id or Host "49983-<id>.<domain>"): the Connect RPCs
#    process.Process/Start (server streaming, connect+json envelopes, chunked),
#    SendSignal and List, the /files REST endpoints, /health, envd's user
#    selection (Basic auth "name:") and its access-token check for secure sandboxes;
#  * envd's traps: stdin is an open pipe unless "stdin":false, Connect-Timeout-Ms
#    SIGKILLs the one pid only, a client disconnect leaves the process running,
#    a killed sandbox cuts its streams without the end-of-stream envelope.
# A sandbox is a bubblewrap process tree (own filesystem view, pid/ipc/uts and,
# without internet access, net namespaces) whose pid-2 process is an agent (this
# file in --agent mode) doing on the mock's behalf what envd does inside the VM.
# Not reproduced: TLS, pause/resume, SendInput/Connect/Update RPCs, the
# filesystem RPC service, resource limits, file permission checks per user.
"""Mock of the E2B control plane and of envd, for tests.

Usage:
  python3 mock_e2b.py --port-file FILE [--api-key KEY] [--expose PATH]...
                      [--template NAME:MEMORY_MB:CPU_COUNT]... [--run-as-uid UID]

  --port-file   file that receives the port listened on at 127.0.0.1 (atomic write)
  --api-key     the X-API-Key control-plane requests must carry
                (default test-key-0123456789)
  --expose      host path bound read-only at the same path in every sandbox
  --template    a template to offer, repeatable (default base:512:2)
  --run-as-uid  uid and gid of the sandbox user "user" (default 1000)

Test hooks (no key): GET /_mock/state, POST /_mock/faults, POST /_mock/reset.
Internal: --agent SOCKET runs the in-sandbox agent (started through bwrap).

Agent protocol (unix socket, one connection per operation): the mock sends one
JSON line {"op": spawn|signal|list|read|write, ...} (write: then exactly "size"
raw bytes); the agent answers with frames, kind byte + 4-byte big-endian length +
payload: b"J" JSON object, b"1" stdout bytes, b"2" stderr bytes, b"D" file bytes.
"""

import argparse
import base64
import collections
import contextlib
import datetime
import json
import os
import queue
import re
import secrets
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

THIS_FILE = os.path.abspath(__file__)
AGENT_FILE = "/opt/envd/mock_e2b.py"        # where THIS_FILE is bound in a sandbox
AGENT_SOCK = "/run/envd/agent.sock"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_BODY = 200 * 1024 * 1024
DATA_CHUNK = 32 * 1024
DRAIN_GRACE = 0.1       # after exit, how long pipes held by grandchildren may stay silent
GO_SIGNALS = {1: "hangup", 2: "interrupt", 3: "quit", 4: "illegal instruction",
              5: "trace/breakpoint trap", 6: "aborted", 7: "bus error",
              8: "floating point exception", 9: "killed", 10: "user defined signal 1",
              11: "segmentation fault", 12: "user defined signal 2", 13: "broken pipe",
              14: "alarm clock", 15: "terminated"}
RPC_SIGNALS = {"SIGNAL_SIGTERM": 15, "SIGNAL_SIGKILL": 9, 15: 15, 9: 9}
CONNECT_HTTP = {"invalid_argument": 400, "unauthenticated": 401, "not_found": 404,
                "internal": 500, "unimplemented": 501, "unavailable": 503}


# ---------------------------------------------------------------- frames (both sides)

def send_frame(sock, kind, payload):
    if isinstance(payload, dict):
        payload = json.dumps(payload).encode()
    sock.sendall(kind + struct.pack(">I", len(payload)) + payload)


def recv_exact(sock, n):
    parts = []
    while n:
        got = sock.recv(min(n, 1 << 20))
        if not got:
            return None
        parts.append(got)
        n -= len(got)
    return b"".join(parts)


def recv_frame(sock):
    head = recv_exact(sock, 5)
    if head is None:
        return None
    payload = recv_exact(sock, struct.unpack(">I", head[1:])[0])
    return None if payload is None else (head[:1], payload)


# ---------------------------------------------------------------- the in-sandbox agent

class AgentProc:
    """A process started by spawn; its lock also serialises frames to the mock."""

    def __init__(self, popen, conn, req):
        self.popen, self.pid, self.conn, self.req = popen, popen.pid, conn, req
        self.cond = threading.Condition()
        self.conn_ok = True
        self.status = None
        self.exit_time = None
        self.last_data = time.monotonic()
        self.eofs = 0
        self.ended = False

    def emit(self, kind, payload):          # call with self.cond held
        if self.conn_ok:
            try:
                send_frame(self.conn, kind, payload)
            except OSError:
                self.conn_ok = False        # the mock went away: the process lives on


AGENT_PROCS = {}
AGENT_LOCK = threading.Lock()


def agent_reaper():
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.05)
            continue
        with AGENT_LOCK:
            rec = AGENT_PROCS.pop(pid, None)
        if rec:
            with rec.cond:
                rec.popen.returncode = os.waitstatus_to_exitcode(status)
                rec.status, rec.exit_time = status, time.monotonic()
                rec.cond.notify_all()


def agent_pump(rec, stream, kind):
    while True:
        try:
            data = os.read(stream.fileno(), DATA_CHUNK)
        except OSError:
            data = b""
        with rec.cond:
            if not data:
                rec.eofs += 1
                rec.cond.notify_all()
                break
            rec.last_data = time.monotonic()
            if not rec.ended:
                rec.emit(kind, data)
    stream.close()


def exec_problem(cmd, path_var, cwd):
    """Go exec's LookPath: the error text when cmd cannot be executed, else None."""
    if not cmd:
        return 'exec: no command'
    def runnable(p):
        try:
            st = os.stat(p)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and st.st_mode & 0o111
    if "/" in cmd:
        full = cmd if os.path.isabs(cmd) else os.path.join(cwd, cmd)
        return None if runnable(full) else f"fork/exec {cmd}: no such file or directory"
    for d in path_var.split(":"):
        if runnable(os.path.join(d or ".", cmd)):
            return None
    return f'exec: "{cmd}": executable file not found in $PATH'


def identity(uid, gid):
    """Popen arguments running the child as uid/gid (not root: everyone is us)."""
    if os.geteuid() != 0:
        return {}
    return {"user": uid, "group": gid, "extra_groups": []}


def agent_spawn(conn, req):
    cwd = req["cwd"]
    if not os.path.isdir(cwd):
        return send_frame(conn, b"J", {"error": {"code": "invalid_argument",
                                                 "message": f"cwd '{cwd}' does not exist"}})
    problem = exec_problem(req["cmd"], req["env"].get("PATH", DEFAULT_PATH), cwd)
    argv = ["/bin/sh", "-c", 'exec "$@"', "--", req["cmd"], *req["args"]]
    with AGENT_LOCK:
        try:
            if problem:
                raise OSError(problem)
            popen = subprocess.Popen(
                argv, stdin=subprocess.PIPE if req["stdin"] else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=req["env"],
                close_fds=True, **identity(req["uid"], req["gid"]))
        except (OSError, subprocess.SubprocessError) as e:
            msg = problem or str(e)
            return send_frame(conn, b"J", {"error": {
                "code": "internal", "message": f"failed to start process: {msg}"}})
        rec = AgentProc(popen, conn, req)
        AGENT_PROCS[popen.pid] = rec
    with rec.cond:
        rec.emit(b"J", {"start": {"pid": rec.pid}})
    for stream, kind in ((popen.stdout, b"1"), (popen.stderr, b"2")):
        threading.Thread(target=agent_pump, args=(rec, stream, kind), daemon=True).start()
    timer = None
    if req.get("timeout_ms"):
        timer = threading.Timer(req["timeout_ms"] / 1000.0, agent_expire, args=(rec,))
        timer.daemon = True
        timer.start()
    agent_finish(rec)
    if timer:
        timer.cancel()


def agent_expire(rec):
    with rec.cond:
        if rec.status is None:
            os.kill(rec.pid, signal.SIGKILL)


def agent_finish(rec):
    """Like Go exec: end once exited and drained, not waiting on inherited pipes."""
    with rec.cond:
        rec.cond.wait_for(lambda: rec.status is not None)
        while rec.eofs < 2:
            idle = time.monotonic() - max(rec.last_data, rec.exit_time)
            if idle >= DRAIN_GRACE:
                break
            rec.cond.wait(DRAIN_GRACE - idle)
        rec.ended = True
        if os.WIFSIGNALED(rec.status):
            rec.emit(b"J", {"end": {"signal": os.WTERMSIG(rec.status)}})
        else:
            rec.emit(b"J", {"end": {"exit_code": os.WEXITSTATUS(rec.status)}})
    if rec.popen.stdin:
        rec.popen.stdin.close()


def agent_find(req):
    with AGENT_LOCK:
        for rec in AGENT_PROCS.values():
            if rec.pid == req.get("pid") or (req.get("tag") and rec.req.get("tag") == req["tag"]):
                return rec
    return None


def agent_signal(conn, req):
    rec = agent_find(req)
    if rec is None:
        return send_frame(conn, b"J", {"error": "not_found"})
    with rec.cond:
        if rec.status is None:
            os.kill(rec.pid, req["signal"])
    send_frame(conn, b"J", {"ok": True})


def agent_list(conn, _req):
    with AGENT_LOCK:
        recs = list(AGENT_PROCS.values())
    procs = [{"pid": r.pid, "cmd": r.req["cmd"], "args": r.req["args"], "cwd": r.req["cwd"],
              "tag": r.req.get("tag")} for r in recs]
    send_frame(conn, b"J", {"processes": procs})


def agent_read(conn, req):
    try:
        if os.path.isdir(req["path"]):
            return send_frame(conn, b"J", {"error": "is_dir"})
        with open(req["path"], "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return send_frame(conn, b"J", {"error": "not_found"})
    except OSError as e:
        return send_frame(conn, b"J", {"error": "io", "message": str(e)})
    send_frame(conn, b"J", {"size": len(data)})
    for off in range(0, len(data), 1 << 20):
        send_frame(conn, b"D", data[off:off + (1 << 20)])


def chown_as(path, uid, gid):
    if os.geteuid() == 0:
        os.chown(path, uid, gid)


def make_parents(d, uid, gid):
    missing = []
    while d and not os.path.exists(d):
        missing.append(d)
        d = os.path.dirname(d)
    for p in reversed(missing):
        os.mkdir(p, 0o755)
        chown_as(p, uid, gid)


def agent_write(conn, req, rfile):
    path, data = req["path"], rfile.read(req["size"])   # the whole body, always
    try:
        if os.path.isdir(path):
            return send_frame(conn, b"J", {"error": "is_dir"})
        make_parents(os.path.dirname(path), req["uid"], req["gid"])
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), "wb") as f:
            chown_as(f.fileno(), req["uid"], req["gid"])
            os.fchmod(f.fileno(), 0o644)
            f.write(data)
    except OSError as e:
        return send_frame(conn, b"J", {"error": "io", "message": str(e)})
    send_frame(conn, b"J", {"ok": True})


def agent_serve(conn):
    with conn:
        rfile = conn.makefile("rb")
        try:
            req = json.loads(rfile.readline())
            op = req.get("op")
            if op == "write":
                agent_write(conn, req, rfile)
            else:
                {"spawn": agent_spawn, "signal": agent_signal, "list": agent_list,
                 "read": agent_read}[op](conn, req)
        except (OSError, ValueError, KeyError) as e:
            with contextlib.suppress(OSError):
                send_frame(conn, b"J", {"error": "io", "message": repr(e)})


def agent_main(sock_path, user_uid):
    if os.geteuid() == 0:
        os.chown("/home/user", user_uid, user_uid)
    os.chmod("/home/user", 0o755)
    os.chmod("/root", 0o700)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = sock_path + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    srv.bind(tmp)
    srv.listen(128)
    os.rename(tmp, sock_path)   # the mock sees the socket only once it listens
    threading.Thread(target=agent_reaper, daemon=True).start()
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=agent_serve, args=(conn,), daemon=True).start()


# ---------------------------------------------------------------- sandboxes (host side)

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
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
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
              "--ro-bind", THIS_FILE, AGENT_FILE]
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

    def processes_alive(self):
        if self.killed or self.popen is None:
            return 0
        table = proc_table()
        return sum(1 for pid in descendants(self.popen.pid, table)
                   if table[pid][1] != "bwrap" and table[pid][2] != "Z"
                   and AGENT_FILE + " --agent" not in table[pid][3])

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


# ---------------------------------------------------------------- HTTP

class BodyTooLarge(Exception):
    pass


def envelope(flag, obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    return bytes([flag]) + struct.pack(">I", len(data)) + data


def end_event(st):
    if "signal" in st:
        sig = st["signal"]
        return {"exitCode": -1, "status": "signal: " + GO_SIGNALS.get(sig, f"signal {sig}")}
    code = st["exit_code"]
    ev = {"exited": True, "status": f"exit status {code}"}
    if code:
        ev["exitCode"] = code           # proto3 JSON: zero values are omitted
    return ev


def pick(d, *names, default=None):
    for n in names:
        if n in d:
            return d[n]
    return default


def multipart_file(body, ctype):
    m = re.search(r'boundary="?([^";]+)"?', ctype)
    if not m:
        return None
    for part in body.split(b"--" + m.group(1).encode())[1:]:
        head, sep, content = part.partition(b"\r\n\r\n")
        if sep and re.search(rb'(?<![a-z])name="?file\b', head):
            return content[:-2] if content.endswith(b"\r\n") else content
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-e2b"

    def log_message(self, *_args):
        pass

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = lambda self: self.dispatch()

    def handle(self):
        try:
            super().handle()
        except (ConnectionError, TimeoutError):
            pass                        # the client went away: nothing to report

    # ---- plumbing
    def handle_expect_100(self):
        if int(self.headers.get("Content-Length") or 0) > MAX_BODY:
            self.send_json(413, {"code": 413, "message": "request body too large"}, close=True)
            return False
        return super().handle_expect_100()

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts, total = [], 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                total += size
                if total > MAX_BODY:
                    raise BodyTooLarge()
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise BodyTooLarge()
        return self.rfile.read(n) if n else b""

    def send_bytes(self, status, data, ctype="application/json", close=False):
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if status != 204:
            self.wfile.write(data)

    def send_json(self, status, obj, close=False):
        self.send_bytes(status, json.dumps(obj).encode(), close=close)

    def error(self, status, message):
        self.send_json(status, {"code": status, "message": message})

    def connect_error(self, code, message, status=None):
        self.send_json(status or CONNECT_HTTP.get(code, 500), {"code": code, "message": message})

    def number_header(self, name):
        try:
            return max(0.0, float(self.headers.get(name) or 0))
        except ValueError:
            return 0.0

    def json_body(self):
        try:
            obj = json.loads(self.body or b"null")
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, dict(urllib.parse.parse_qsl(url.query))
        if not path.startswith("/_mock/"):
            STATE.requests.append({"method": self.command, "path": path, "query": url.query,
                                   "headers": dict(self.headers.items())})
        try:
            self.body = self.read_body()
            if path.startswith("/_mock/"):
                return self.mock_hooks(path)
            sid = self.headers.get("E2b-Sandbox-Id")
            host = re.match(r"49983-([^.]+)\.", self.headers.get("Host", ""))
            sid = sid or (host.group(1) if host else None)
            if sid or path in ("/health", "/files") or path.startswith("/process."):
                return self.envd(sid, path, query)
            return self.control(path, query)
        except BodyTooLarge:
            self.send_json(413, {"code": 413, "message": "request body too large"}, close=True)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # ---- test hooks
    def mock_hooks(self, path):
        if path == "/_mock/state" and self.command == "GET":
            with STATE.lock:
                boxes = list(STATE.sandboxes.values())
                out = {"deleted": list(STATE.deleted), "expired": list(STATE.expired),
                       "requests": list(STATE.requests), "faults": dict(STATE.faults)}
            out["sandboxes"] = [{"sandboxID": b.id, "templateID": b.template,
                                 "metadata": b.metadata, "allow_internet_access": b.internet,
                                 "secure": b.secure, "envVars": b.env_vars,
                                 "processes_alive": b.processes_alive()} for b in boxes]
            return self.send_json(200, out)
        if path == "/_mock/faults" and self.command == "POST":
            faults = self.json_body()
            if faults is None:
                return self.error(400, "faults must be a JSON object")
            with STATE.lock:
                STATE.faults = faults
            return self.send_bytes(204, b"")
        if path == "/_mock/reset" and self.command == "POST":
            STATE.kill_all()
            with STATE.lock:
                STATE.faults, STATE.deleted, STATE.expired = {}, [], []
                STATE.requests.clear()
            return self.send_bytes(204, b"")
        self.error(404, "no such hook")

    # ---- control plane
    def control(self, path, query):
        if self.headers.get("X-API-Key") != CFG.api_key:
            return self.error(401, "invalid api key")
        m = re.fullmatch(r"/sandboxes/([^/]+)(/timeout)?", path)
        if path == "/sandboxes" and self.command == "POST":
            return self.create_sandbox()
        if path in ("/sandboxes", "/v2/sandboxes") and self.command == "GET":
            return self.list_sandboxes(query)
        if path == "/templates" and self.command == "GET":
            return self.send_json(200, [{"templateID": n, "aliases": [n], "cpuCount": c,
                                         "memoryMB": mem, "public": False}
                                        for n, (mem, c) in CFG.templates.items()])
        if m and m.group(2) and self.command == "POST":
            return self.set_timeout(m.group(1))
        if m and not m.group(2) and self.command == "GET":
            sb = STATE.get(m.group(1))
            if sb is None:
                return self.error(404, f"sandbox '{m.group(1)}' not found")
            mem, cpu = CFG.templates[sb.template]
            return self.send_json(200, dict(sb.summary(), cpuCount=cpu, memoryMB=mem,
                                            envdVersion="0.2.4", clientID="6532622b"))
        if m and not m.group(2) and self.command == "DELETE":
            return self.delete_sandbox(m.group(1))
        self.error(404, "not found")

    def create_sandbox(self):
        faults = dict(STATE.faults)
        if faults.get("create_delay_ms"):
            time.sleep(faults["create_delay_ms"] / 1000.0)
        if faults.get("create_status"):
            return self.error(faults["create_status"], "injected fault")
        req = self.json_body()
        if req is None:
            return self.error(400, "request body must be a JSON object")
        template = pick(req, "templateID", "template_id")
        if not isinstance(template, str) or not template:
            return self.error(400, "templateID is required")
        if template not in CFG.templates:
            return self.error(404, f"template '{template}' not found")
        timeout = pick(req, "timeout", default=15)
        if not isinstance(timeout, (int, float)) or timeout < 0:
            return self.error(400, "timeout must be a non-negative number")
        sb = Sandbox(template, timeout, pick(req, "metadata", default={}) or {},
                     pick(req, "envVars", "env_vars", default={}) or {},
                     bool(pick(req, "secure", default=False)),
                     bool(pick(req, "allow_internet_access", "allowInternetAccess",
                               default=True)))
        try:
            sb.start()
        except (OSError, RuntimeError) as e:
            return self.error(500, str(e))
        with STATE.lock:
            STATE.sandboxes[sb.id] = sb
        self.send_json(201, {"sandboxID": sb.id, "templateID": template, "clientID": "6532622b",
                             "envdVersion": "0.2.4", "domain": None,
                             **({"envdAccessToken": sb.token} if sb.secure else {})})

    def list_sandboxes(self, query):
        wanted = urllib.parse.parse_qsl(query.get("metadata", ""))
        states = query.get("state", "running").split(",")
        with STATE.lock:
            boxes = list(STATE.sandboxes.values())
        out = [sb.summary() for sb in boxes
               if "running" in states and all(sb.metadata.get(k) == v for k, v in wanted)]
        self.send_json(200, out)

    def set_timeout(self, sid):
        req, sb = self.json_body(), STATE.get(sid)
        if sb is None:
            return self.error(404, f"sandbox '{sid}' not found")
        if req is None or not isinstance(req.get("timeout"), (int, float)):
            return self.error(400, "timeout is required")
        sb.end = time.time() + req["timeout"]
        self.send_bytes(204, b"")

    def delete_sandbox(self, sid):
        status = STATE.faults.get("delete_status")
        if status:
            return self.error(status, "injected fault")
        sb = STATE.take(sid)
        if sb is None:
            return self.error(404, f"sandbox '{sid}' not found")
        sb.kill()
        with STATE.lock:
            STATE.deleted.append(sid)
        self.send_bytes(204, b"")

    # ---- envd
    def envd(self, sid, path, query):
        sb = STATE.get(sid) if sid else None
        if sb is None or sb.killed:
            return self.error(502, "sandbox not found")
        if path == "/health" and self.command == "GET":
            return self.send_bytes(204, b"")
        if sb.secure and self.headers.get("X-Access-Token") != sb.token:
            return self.connect_error("unauthenticated", "invalid access token")
        user = self.envd_user(query if path == "/files" else {})
        if user is None:
            return self.connect_error("unauthenticated", "invalid username")
        route = {("POST", "/process.Process/Start"): self.rpc_start,
                 ("POST", "/process.Process/SendSignal"): self.rpc_signal,
                 ("POST", "/process.Process/List"): self.rpc_list,
                 ("GET", "/files"): self.files_get,
                 ("POST", "/files"): self.files_post}.get((self.command, path))
        if route is None:
            return self.connect_error("not_found", f"{self.command} {path} not found")
        route(sb, user, query)

    def envd_user(self, query):
        name = query.get("username")
        auth = self.headers.get("Authorization", "")
        if not name and auth.startswith("Basic "):
            try:
                name = base64.b64decode(auth[6:].strip()).decode().split(":")[0]
            except ValueError:
                return None
        name = name or "user"
        if name not in ("user", "root"):
            return None
        if name == "user":
            uid, home = CFG.run_as_uid, "/home/user"
        else:
            uid, home = 0, "/root"
        ids = (uid, uid) if CFG.is_root else (os.getuid(), os.getgid())
        return {"name": name, "uid": ids[0], "gid": ids[1], "home": home}

    def agent_call(self, sb, request, payload=b""):
        agent = sb.connect()
        with agent:
            agent.sendall(json.dumps(request).encode() + b"\n")
            if payload:
                agent.sendall(payload)
            frame = recv_frame(agent)
            if frame is None:
                raise OSError("agent went away")
            reply, data = json.loads(frame[1]), []
            for _ in range(0, reply.get("size", 0), 1 << 20):
                data.append(recv_frame(agent)[1])
            return reply, b"".join(data)

    def resolve(self, path, user):
        if path.startswith("~"):
            path = user["home"] + path[1:]
        return os.path.normpath(os.path.join(user["home"], path))

    def rpc_signal(self, sb, _user, _query):
        req = self.json_body()
        if req is None or not isinstance(req.get("process"), dict):
            return self.connect_error("invalid_argument", "body must be {process, signal}")
        sel = req["process"]
        sig = RPC_SIGNALS.get(req.get("signal"))
        if sig is None:
            return self.connect_error("unimplemented", f"signal {req.get('signal')!r} not supported")
        try:
            reply, _ = self.agent_call(sb, {"op": "signal", "pid": sel.get("pid"),
                                            "tag": sel.get("tag"), "signal": sig})
        except OSError:
            return self.error(502, "sandbox not found")
        if reply.get("error"):
            return self.connect_error("not_found", f"process {sel} not found")
        self.send_json(200, {})

    def rpc_list(self, sb, _user, _query):
        try:
            reply, _ = self.agent_call(sb, {"op": "list"})
        except OSError:
            return self.error(502, "sandbox not found")
        procs = []
        for p in reply["processes"]:
            entry = {"pid": p["pid"], "config": {"cmd": p["cmd"], "args": p["args"],
                                                 "cwd": p["cwd"]}}
            if p.get("tag"):
                entry["tag"] = p["tag"]
            procs.append(entry)
        self.send_json(200, {"processes": procs})

    def files_get(self, sb, user, query):
        if not query.get("path"):
            return self.error(400, "path is required")
        path = self.resolve(query["path"], user)
        try:
            reply, data = self.agent_call(sb, {"op": "read", "path": path})
        except OSError:
            return self.error(502, "sandbox not found")
        err = reply.get("error")
        if err == "not_found":
            return self.error(404, "path not found")
        if err == "is_dir":
            return self.error(400, f"path '{path}' is a directory")
        if err:
            return self.error(500, reply.get("message", err))
        self.send_bytes(200, data, "application/octet-stream")

    def files_post(self, sb, user, query):
        if not query.get("path"):
            return self.error(400, "path is required")
        path = self.resolve(query["path"], user)
        data, ctype = self.body, self.headers.get("Content-Type", "")
        if ctype.startswith("multipart/form-data"):
            data = multipart_file(self.body, ctype)
            if data is None:
                return self.error(400, "multipart body has no part named 'file'")
        try:
            reply, _ = self.agent_call(sb, {"op": "write", "path": path, "size": len(data),
                                            "uid": user["uid"], "gid": user["gid"]}, data)
        except OSError:
            return self.error(502, "sandbox not found")
        if reply.get("error") == "is_dir":
            return self.error(400, f"path '{path}' is a directory")
        if reply.get("error"):
            return self.error(500, reply.get("message", "write failed"))
        self.send_json(200, [{"path": path, "name": os.path.basename(path), "type": "file"}])

    # ---- process.Process/Start
    def rpc_start(self, sb, user, _query):
        faults = dict(STATE.faults)
        if faults.get("start_status"):
            status = int(faults["start_status"])
            code = {v: k for k, v in CONNECT_HTTP.items()}.get(status, "unknown")
            return self.connect_error(code, "injected fault", status)
        req, problem = self.start_request()
        if problem:
            return self.stream_reply([], {"error": {"code": "invalid_argument",
                                                    "message": problem}})
        proc = req.get("process") or {}
        env = {"PATH": DEFAULT_PATH, "HOME": user["home"], "USER": user["name"],
               "LOGNAME": user["name"], **sb.env_vars, **(proc.get("envs") or {})}
        spawn = {"op": "spawn", "cmd": proc.get("cmd", ""), "args": proc.get("args") or [],
                 "env": env, "cwd": self.resolve(proc.get("cwd") or user["home"], user),
                 "uid": user["uid"], "gid": user["gid"], "tag": req.get("tag"),
                 "stdin": req.get("stdin", True) is not False,
                 "timeout_ms": self.number_header("Connect-Timeout-Ms")}
        try:
            agent = sb.connect()
            agent.sendall(json.dumps(spawn).encode() + b"\n")
        except OSError:
            return self.error(502, "sandbox not found")
        q = queue.Queue()
        with sb.lock:
            sb.streams.add(q)
        threading.Thread(target=self.pump_agent, args=(agent, q), daemon=True).start()
        try:
            self.relay(agent, q, faults.get("cut_stream_after_events"))
        finally:
            with sb.lock:
                sb.streams.discard(q)
            try:
                agent.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            agent.close()

    def start_request(self):
        body = self.body
        if len(body) < 5 or body[0] != 0:
            return None, "request must be one uncompressed connect+json envelope"
        size = struct.unpack(">I", body[1:5])[0]
        try:
            req = json.loads(body[5:5 + size])
        except ValueError as e:
            return None, f"invalid JSON: {e}"
        if not isinstance(req, dict) or not isinstance(req.get("process"), dict):
            return None, "process is required"
        proc = req["process"]
        if not isinstance(proc.get("cmd"), str):
            return None, "process.cmd is required"
        if not all(isinstance(a, str) for a in proc.get("args") or []):
            return None, "process.args must be strings"
        if not all(isinstance(v, str) for v in (proc.get("envs") or {}).values()):
            return None, "process.envs values must be strings"
        return req, None

    @staticmethod
    def pump_agent(agent, q):
        while True:
            try:
                frame = recv_frame(agent)
            except OSError:
                frame = None
            q.put(frame)
            if frame is None:
                return

    def begin_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/connect+json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def write_chunk(self, data):
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))

    def stream_reply(self, messages, end_stream):
        self.begin_stream()
        for m in messages:
            self.write_chunk(envelope(0, m))
        self.write_chunk(envelope(2, end_stream))
        self.wfile.write(b"0\r\n\r\n")

    def drop(self):
        """End the response the way a dropped proxy connection does."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def client_gone(self):
        if not select.select([self.connection], [], [], 0)[0]:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def relay(self, agent, q, cut_after):
        keepalive = self.number_header("Keepalive-Ping-Interval")
        self.begin_stream()
        sent, last = 0, time.monotonic()
        while cut_after is None or sent < cut_after:
            wait = 0.5
            if keepalive:
                wait = max(0.0, min(wait, last + keepalive - time.monotonic()))
            try:
                frame = q.get(timeout=wait)
            except queue.Empty:
                if keepalive and time.monotonic() - last >= keepalive:
                    frame = (b"K", b"")
                elif self.client_gone():
                    return self.drop()
                else:
                    continue
            if frame is None:
                return self.drop()          # sandbox killed: no end-of-stream envelope
            kind, payload = frame
            if kind == b"J":
                msg = json.loads(payload)
                if "error" in msg:
                    self.write_chunk(envelope(2, {"error": msg["error"]}))
                    return self.wfile.write(b"0\r\n\r\n")
                event = ({"start": msg["start"]} if "start" in msg
                         else {"end": end_event(msg["end"])})
            elif kind == b"K":
                event = {"keepalive": {}}
            else:
                name = "stdout" if kind == b"1" else "stderr"
                event = {"data": {name: base64.b64encode(payload).decode()}}
            try:
                self.write_chunk(envelope(0, {"event": event}))
            except OSError:
                return self.drop()          # client left: the process keeps running
            sent, last = sent + 1, time.monotonic()
            if "end" in event and (cut_after is None or sent < cut_after):
                self.write_chunk(envelope(2, {}))
                return self.wfile.write(b"0\r\n\r\n")
        self.drop()


# ---------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description="E2B control plane + envd mock")
    p.add_argument("--port-file")
    p.add_argument("--api-key", default="test-key-0123456789")
    p.add_argument("--expose", action="append", default=[])
    p.add_argument("--template", action="append", default=[])
    p.add_argument("--run-as-uid", type=int, default=1000)
    p.add_argument("--agent", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.agent and not args.port_file:
        p.error("--port-file is required")
    return args


def parse_templates(specs):
    out = {}
    for spec in specs or ["base:512:2"]:
        name, mem, cpu = spec.split(":")
        out[name] = (int(mem), int(cpu))
    return out


def write_port_file(path, port):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".port.")
    with os.fdopen(fd, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


def main(argv):
    args = parse_args(argv)
    if args.agent:
        return agent_main(args.agent, args.run_as_uid)
    CFG.api_key, CFG.run_as_uid = args.api_key, args.run_as_uid
    CFG.expose = [os.path.abspath(p) for p in args.expose]
    CFG.templates = parse_templates(args.template)
    CFG.is_root = os.geteuid() == 0
    if not CFG.is_root:
        print("mock_e2b: not running as root; every sandbox user maps to uid "
              f"{os.getuid()}", file=sys.stderr)
    CFG.state_root = tempfile.mkdtemp(prefix="mock-e2b-")
    CFG.launcher = Launcher()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=STATE.reap_forever, daemon=True).start()
    write_port_file(args.port_file, server.server_address[1])
    while not stop.wait(0.5):
        pass
    STATE.kill_all()
    server.shutdown()
    server.server_close()
    shutil.rmtree(CFG.state_root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
