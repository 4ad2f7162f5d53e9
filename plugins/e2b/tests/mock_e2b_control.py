# mock_e2b_control.py: the control-plane REST API (api.e2b.dev) of the E2B stand-in, as a
# mixin of mock_e2b.Handler: X-API-Key auth, create / get / list (v2, metadata filter) / kill
# sandboxes, set a sandbox's timeout, list templates, and the create/delete fault hooks.
# Errors are {"code","message"} JSON, through the Handler's plumbing (error, send_json, ...).
import re
import time
import urllib.parse

from mock_e2b_sandbox import CFG, STATE, Sandbox


def pick(d, *names, default=None):
    for n in names:
        if n in d:
            return d[n]
    return default


class ControlMixin:
    """The control-plane routes of mock_e2b.Handler."""

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
