# mock_e2b_envd.py: the in-sandbox daemon envd of the E2B stand-in, as a mixin of
# mock_e2b.Handler, reached the way E2B's proxy routes it (E2b-Sandbox-Id or Host
# "49983-<id>.<domain>"): the Connect RPCs process.Process/Start (server streaming,
# connect+json envelopes, chunked, keepalives), SendSignal and List, the /files REST
# endpoints, /health, the user selection and the access-token check of secure sandboxes.
# The work inside the sandbox is done by its agent (mock_e2b_agent.py), over its unix socket.
import base64
import json
import os
import queue
import re
import select
import socket
import struct
import threading
import time

from mock_e2b_agent import DEFAULT_PATH, recv_frame
from mock_e2b_sandbox import CFG, STATE


GO_SIGNALS = {1: "hangup", 2: "interrupt", 3: "quit", 4: "illegal instruction",
              5: "trace/breakpoint trap", 6: "aborted", 7: "bus error",
              8: "floating point exception", 9: "killed", 10: "user defined signal 1",
              11: "segmentation fault", 12: "user defined signal 2", 13: "broken pipe",
              14: "alarm clock", 15: "terminated"}
RPC_SIGNALS = {"SIGNAL_SIGTERM": 15, "SIGNAL_SIGKILL": 9, 15: 15, 9: 9}
CONNECT_HTTP = {"invalid_argument": 400, "unauthenticated": 401, "not_found": 404,
                "internal": 500, "unimplemented": 501, "unavailable": 503}


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


def multipart_file(body, ctype):
    m = re.search(r'boundary="?([^";]+)"?', ctype)
    if not m:
        return None
    for part in body.split(b"--" + m.group(1).encode())[1:]:
        head, sep, content = part.partition(b"\r\n\r\n")
        if sep and re.search(rb'(?<![a-z])name="?file\b', head):
            return content[:-2] if content.endswith(b"\r\n") else content
    return None


class EnvdMixin:
    """The envd routes of mock_e2b.Handler."""

    def connect_error(self, code, message, status=None):
        self.send_json(status or CONNECT_HTTP.get(code, 500), {"code": code, "message": message})

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
