#!/usr/bin/env python3
"""`cordon mcp` fed malformed JSON-RPC on stdio: every mistake gets its JSON-RPC error, a
message larger than the limit is refused without being held, the server keeps serving, and it
ends when stdin ends. The operator's policy file is read once, when the server starts.
   raw_rpc.py CORDON WORKSPACE"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

cordon, workspace = sys.argv[1], sys.argv[2]
p = subprocess.Popen([cordon, "mcp", "--policy", "standard", "--workspace", workspace],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += 0 if ok else 1


def send(raw):
    p.stdin.write(raw if isinstance(raw, bytes) else raw.encode() + b"\n")


def reply():
    line = p.stdout.readline()
    return json.loads(line) if line else None


def error_code(r):
    return (r or {}).get("error", {}).get("code")


send("this is not json")
check(error_code(reply()) == -32700, "not JSON: parse error")
send("[1, 2]")
check(error_code(reply()) == -32600, "not an object: invalid request")
send('{"jsonrpc":"1.0","id":1,"method":"ping"}')
check(error_code(reply()) == -32600, "a wrong jsonrpc version: invalid request")
send('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}')
check(error_code(reply()) == -32600, "an id that is an object: invalid request")
send('{"jsonrpc":"2.0","id":2,"method":"no/such"}')
r = reply()
check(error_code(r) == -32601 and r.get("id") == 2, "an unknown method: method not found, same id")
send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}')
check(error_code(reply()) == -32602, "a tool name that is a number: invalid params")
send('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"execute_command","arguments":{"argv":"ls"}}}')
r = reply()
check(r and r.get("id") == 4 and (error_code(r) == -32602 or r.get("result", {}).get("isError")),
      "argv that is not an array: refused")
send('{"jsonrpc":"2.0","id":"l1","method":"logging/setLevel","params":{"level":"loud"}}')
check(error_code(reply()) == -32602, "logging/setLevel with an unknown level: invalid params")
send('{"jsonrpc":"2.0","id":"l2","method":"logging/setLevel","params":{"level":7}}')
check(error_code(reply()) == -32602, "logging/setLevel with a level that is a number: invalid params")
send('{"jsonrpc":"2.0","id":"l3","method":"logging/setLevel","params":{"level":"error"}}')
check(reply() == {"jsonrpc": "2.0", "id": "l3", "result": {}}, "logging/setLevel error: accepted")
send('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}')
check(error_code(reply()) == -32600, "params that are not an object: invalid request")
started = time.time()
send(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"' + b"x" * (17 << 20) + b'"}}\n')
check(error_code(reply()) == -32700, "a 17 MiB message: refused")
send('{"jsonrpc":"2.0","method":"notifications/whatever"}')
send('{"jsonrpc":"2.0","id":7,"method":"ping"}')
r = reply()
check(r == {"jsonrpc": "2.0", "id": 7, "result": {}}, "then a ping is answered (notifications are not)")
send('{"jsonrpc":"2.0","id":"s","method":"initialize","params":{"protocolVersion":"1999-01-01"}}')
r = reply()
check(r and r["id"] == "s" and r["result"]["protocolVersion"] == "2025-11-25",
      "an unknown protocol version gets the newest the server speaks")
p.stdin.close()
try:
    status = p.wait(timeout=10)
    check(status == 0, f"stdin's end ends the server (status {status})")
except subprocess.TimeoutExpired:
    p.kill()
    check(False, "stdin's end ends the server")

# A client that goes away mid-call, both pipes closed: no SIGPIPE death, its background command
# is stopped, the server ends.
p = subprocess.Popen([cordon, "mcp", "--policy", "standard", "--workspace", workspace],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
send('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_command",'
     '"arguments":{"argv":["sleep","27.31"],"run_in_background":true}}}')
started = reply()
check(started and not started["result"]["isError"], "a background command starts")
send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command",'
     '"arguments":{"argv":["sleep","3"]}}}')
time.sleep(0.5)
p.stdout.close()
p.stdin.close()
try:
    status = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    status = "hung"
check(status == 0, f"a client gone mid-call ends the server cleanly (status {status})")
alive = True
for _ in range(50):
    alive = subprocess.run(["pgrep", "-f", "sleep 27.31"], capture_output=True).returncode == 0
    if not alive:
        break
    time.sleep(0.1)
check(not alive, "and its background command is stopped")

# Messages sent together are each taken: a call written right behind the initialize request
# runs knowing what the client declared there (it can be asked, so the call asks first).
p = subprocess.Popen([cordon, "mcp", "--policy", "standard", "--workspace", workspace,
                      "--approve", "all"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
send('{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18",'
     '"capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}\n'
     '{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"execute_command",'
     '"arguments":{"argv":["true"]}}}')
first, second = reply(), reply()
check(first and first.get("id") == "i" and "result" in first, "pipelined: initialize answered first")
asked = second and second.get("method") == "elicitation/create"
check(asked, "then the call asks for approval (it knows the client can be asked)")
if asked:
    send(json.dumps({"jsonrpc": "2.0", "id": second["id"], "result": {"action": "decline"}}))
    r = (reply() or {}).get("result", {})
    text = "".join(c.get("text", "") for c in r.get("content", []))
    check(r.get("isError") and "declined" in text, "and, declined, is refused")
p.stdin.close()
p.wait(timeout=30)

# Spill files: a run's whole output is kept once it passes what the server holds in memory, in
# order (held part first), and read back exactly; a short output makes no file at all.
p = subprocess.Popen([cordon, "mcp", "--policy", "standard", "--workspace", workspace],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)


spill = None


def spill_files():
    """The files in this server's spill directory, found through the descriptor it holds."""
    fd_dir = "/proc/%d/fd" % p.pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if "/cordon/mcp/server-%d-" % p.pid in target:  # all but the spill kept above
            return sorted(f for f in os.listdir(target) if f != spill)
    return None


def run_argv(id, argv, look_after=None):
    send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": "execute_command", "arguments": {"argv": argv}}}))
    seen = None
    if look_after is not None:
        time.sleep(look_after)
        seen = spill_files()
    return (reply() or {}).get("result", {}), seen


r, _ = run_argv("s1", ["seq", "1", "300000"])
spill = r.get("structuredContent", {}).get("process_id")
whole, offset = "", 0
for _ in range(20):
    send(json.dumps({"jsonrpc": "2.0", "id": "g", "method": "tools/call",
                     "params": {"name": "get_command_output",
                                "arguments": {"process_id": spill, "since": offset}}}))
    part = (reply() or {}).get("result", {}).get("structuredContent", {})
    whole += part.get("output", "")
    offset = part.get("next_offset", offset)
    if not part.get("more"):
        break
expected = "".join("%d\n" % i for i in range(1, 300001))
check(spill and whole == expected, "output over the cap is kept whole and in order (%d bytes)" % len(whole))
r, seen = run_argv("s2", ["sh", "-c", "echo short; sleep 1.5"], look_after=0.8)
check(seen == [], "a short output makes no spill file while it runs (%s)" % seen)
r, seen = run_argv("s3", ["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' y; sleep 1.5"],
                   look_after=0.8)
check(seen is not None and len(seen) == 1, "a longer one has its file while it runs (%s)" % seen)
check(not r.get("structuredContent", {}).get("process_id") and spill_files() == [],
      "and, under the cap, names no spill and leaves no file")
p.stdin.close()
p.wait(timeout=30)

# The operator's policy is fixed when the server starts: rewriting its file later changes no
# call, and the file as it is when a server starts is what that server enforces.
policy_dir = tempfile.mkdtemp(prefix="cordon-mcp-policy-")
policy = os.path.join(policy_dir, "policy.toml")


def write_policy(blocked):
    with open(policy, "w") as f:
        f.write('version = 1\n[policy]\nname = "fixed"\nextends = "standard"\n'
                '[process]\nblocked_commands = %s\n' % json.dumps(blocked))


def echo_call(id):
    send(json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": "execute_command", "arguments": {"argv": ["echo", "fixed"]}}}))
    r = (reply() or {}).get("result", {})
    text = "".join(c.get("text", "") for c in r.get("content", []))
    return r.get("isError", True), text


def serve_with_policy():
    return subprocess.Popen([cordon, "mcp", "--policy", policy, "--workspace", workspace],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)


write_policy(["su", "sudo"])
p = serve_with_policy()
err, text = echo_call(1)
check(not err and "fixed" in text, "echo runs under a policy that does not block it")
write_policy(["su", "sudo", "echo"])
err, text = echo_call(2)
check(not err and "fixed" in text, "and still runs after the policy file blocks it: fixed at start")
p.stdin.close()
p.wait(timeout=30)
p = serve_with_policy()
err, text = echo_call(3)
check(err and "CRD4005" in text, "a server started with the file as it is now refuses echo")
p.stdin.close()
p.wait(timeout=30)
shutil.rmtree(policy_dir)
sys.exit(1 if failed else 0)
