#!/usr/bin/env python3
# mock_e2b_agent.py: the in-sandbox agent of the E2B stand-in (mock_e2b.py), and the wire
# protocol the mock speaks with it. Each sandbox's bubblewrap runs this file, bound read-only
# at /opt/envd/mock_e2b_agent.py, as its pid-2 process; it does on the mock's behalf what envd
# does inside the VM: starts processes (as the sandbox user), signals and lists them, reads and
# writes files. Standard library only: nothing else is bound into the sandbox.
"""In-sandbox agent of the E2B mock.

Usage (inside the sandbox, started by bwrap):
  python3 mock_e2b_agent.py --agent SOCKET [--run-as-uid UID]

Agent protocol (unix socket, one connection per operation): the mock sends one
JSON line {"op": spawn|signal|list|read|write, ...} (write: then exactly "size"
raw bytes); the agent answers with frames, kind byte + 4-byte big-endian length +
payload: b"J" JSON object, b"1" stdout bytes, b"2" stderr bytes, b"D" file bytes.
"""

import argparse
import contextlib
import json
import os
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True      # never leave a __pycache__ behind

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DATA_CHUNK = 32 * 1024
DRAIN_GRACE = 0.1       # after exit, how long pipes held by grandchildren may stay silent


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


def main(argv):
    p = argparse.ArgumentParser(description="in-sandbox agent of the E2B mock")
    p.add_argument("--agent", required=True, metavar="SOCKET")
    p.add_argument("--run-as-uid", type=int, default=1000)
    args = p.parse_args(argv)
    return agent_main(args.agent, args.run_as_uid)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
