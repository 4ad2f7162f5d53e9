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
# without internet access, net namespaces) whose pid-2 process is an agent
# (mock_e2b_agent.py) doing on the mock's behalf what envd does inside the VM.
# Not reproduced: TLS, pause/resume, SendInput/Connect/Update RPCs, the
# filesystem RPC service, resource limits, file permission checks per user.
#
# This file is the entry point: the CLI, the HTTP server, request dispatch and
# the test hooks. Its siblings: mock_e2b_control.py (control-plane routes),
# mock_e2b_envd.py (envd routes), mock_e2b_sandbox.py (sandboxes, CFG, STATE),
# mock_e2b_agent.py (the in-sandbox agent and its wire protocol).
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
Internal: --agent SOCKET runs the in-sandbox agent (mock_e2b_agent.py, which
bwrap starts directly; its docstring describes the agent protocol).
"""

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True      # the siblings below get no __pycache__ in the repo
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from mock_e2b_agent import agent_main
from mock_e2b_control import ControlMixin
from mock_e2b_envd import EnvdMixin
from mock_e2b_sandbox import CFG, STATE, Launcher

MAX_BODY = 200 * 1024 * 1024


# ---------------------------------------------------------------- HTTP

class BodyTooLarge(Exception):
    pass


class Handler(ControlMixin, EnvdMixin, BaseHTTPRequestHandler):
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
            out["sandboxes"] = []
            for b in boxes:
                commands = b.live_commands()
                out["sandboxes"].append({
                    "sandboxID": b.id, "templateID": b.template, "metadata": b.metadata,
                    "allow_internet_access": b.internet, "secure": b.secure,
                    "envVars": b.env_vars, "processes_alive": len(commands),
                    "commands": commands})
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
