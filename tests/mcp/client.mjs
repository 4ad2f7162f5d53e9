// The agent server driven by the official MCP TypeScript SDK and its stdio client transport:
// the tools and their schemas, a command and its structured result, a refusal and a ceiling
// violation as tool errors, a file written and read back, a path outside the workspace, and a
// long call cancelled (its process gone). Exits non-zero on the first failed check.
//   node client.mjs CORDON SDK_DIR WORKSPACE
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [cordon, sdk, workspace] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdk, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { LoggingMessageNotificationSchema } = await load("types.js");

let failed = 0;
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failed++;
}
const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");
const pause = (ms) => new Promise((res) => setTimeout(res, ms));
const alive = (pattern) => {
  try {
    execFileSync("pgrep", ["-f", pattern]);
    return true;
  } catch {
    return false;
  }
};
async function gone(pattern) {
  for (let i = 0; i < 100; i++) {
    if (!alive(pattern)) return true;
    await pause(100);
  }
  return false;
}

const transport = new StdioClientTransport({
  command: cordon,
  args: ["mcp", "--policy", "standard", "--workspace", workspace],
  stderr: "inherit",
});
const client = new Client({ name: "cordon-test", version: "1.0.0" });
const logged = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logged.push(n.params));
await client.connect(transport);
check(client.getServerVersion()?.name === "cordon", "initialize: the server names itself");

// cordon's log reaches the client at the level it sets, and nothing below it.
check(client.getServerCapabilities()?.logging !== undefined, "the server offers logging");
await client.setLoggingLevel("debug");
await client.callTool({ name: "execute_command", arguments: { argv: ["true"] } });
const ran = logged.filter((m) => m.level === "debug" && String(m.data).startsWith("running 'true'"));
check(ran.length === 1 && ran[0].logger === "cordon",
  `at debug, the call's log lines reach the client (${logged.length} lines)`);
await client.setLoggingLevel("warning");
logged.length = 0;
await client.callTool({ name: "execute_command", arguments: { argv: ["true"] } });
check(logged.length === 0, `at warning, no debug line does (${JSON.stringify(logged)})`);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(["execute_command", "get_command_output", "list_commands",
  "list_files", "read_file", "stop_command", "write_file"]),
  `tools/list: ${names.join(", ")}`);
const exec = tools.find((t) => t.name === "execute_command");
check(exec?.inputSchema?.properties?.argv && exec?.inputSchema?.properties?.command &&
  exec?.inputSchema?.properties?.run_in_background && exec?.inputSchema?.properties?.network,
  "execute_command takes argv or command, run_in_background, network");
check(exec?.outputSchema?.properties?.exit_code !== undefined, "execute_command has an output schema");

let r = await client.callTool({ name: "execute_command", arguments: { argv: ["sh", "-c", "echo hello; exit 3"] } });
check(!r.isError && r.structuredContent?.exit_code === 3 && r.structuredContent?.stdout === "hello\n",
  `a command's exit code and output: ${JSON.stringify(r.structuredContent?.exit_code)}`);
check(r.structuredContent?.backend === "landlock", `it ran in the sandbox (${r.structuredContent?.backend})`);

const progress = [];
r = await client.callTool({ name: "execute_command", arguments: {
  argv: ["sh", "-c", "for i in 1 2 3; do echo tick$i; sleep 0.4; done"] } }, undefined,
  { onprogress: (p) => progress.push(p) });
check(progress.length >= 2 && progress.map((p) => p.message).join("") === "tick1\ntick2\ntick3\n",
  `progress notifications carry the output as it comes (${progress.length} of them)`);

r = await client.callTool({ name: "execute_command", arguments: {
  argv: ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo END"] } });
const spill = r.structuredContent?.process_id;
check(r.structuredContent?.stdout_truncated === true && r.structuredContent?.stdout.length < 1100000 &&
  typeof spill === "string", `output over the cap is cut in the result and kept whole (${spill})`);
let whole = "";
for (let offset = 0, i = 0; i < 20; i++) {
  const part = await client.callTool({ name: "get_command_output", arguments: { process_id: spill, since: offset } });
  whole += part.structuredContent?.output ?? "";
  offset = part.structuredContent?.next_offset ?? offset;
  if (!part.structuredContent?.more) break;
}
check(whole.length === 3000004 && whole.endsWith("xEND\n") && !whole.includes("cordon:"),
  `the whole output reads back with since (${whole.length} bytes)`);

const slow = client.callTool({ name: "execute_command", arguments: { argv: ["sleep", "2.5"] } });
const t0 = Date.now();
r = await client.callTool({ name: "execute_command", arguments: { argv: ["echo", "meanwhile"] } });
check(r.structuredContent?.stdout === "meanwhile\n" && Date.now() - t0 < 2000,
  `a call runs while another is in progress (${Date.now() - t0} ms)`);
r = await slow;
check(r.structuredContent?.exit_code === 0, "and the slow one ends well");

r = await client.callTool({ name: "execute_command", arguments: { command: "echo secret > out.txt" } });
check(r.isError && text(r).includes("CRD4001") && text(r).includes("write_file"),
  "a redirection is refused with its code and a remedy");

r = await client.callTool({ name: "execute_command", arguments: { command: "true", timeout: 99999 } });
check(r.isError && text(r).includes("CRD4006"), "a timeout above the policy's is refused (the ceiling)");

r = await client.callTool({ name: "execute_command", arguments: { command: "true", network: true } });
check(r.isError && text(r).includes("network.allow = false"), "asking for the network the policy denies is refused");

r = await client.callTool({ name: "execute_command", arguments: { command: "true", timeout: 5 } });
check(!r.isError && r.structuredContent?.exit_code === 0, "a shorter timeout is allowed");

r = await client.callTool({ name: "write_file", arguments: { path: "notes/a.txt", content: "written by the agent\n" } });
check(!r.isError, "write_file");
r = await client.callTool({ name: "read_file", arguments: { path: "notes/a.txt" } });
check(!r.isError && text(r) === "written by the agent\n", "read_file gives it back");
r = await client.callTool({ name: "execute_command", arguments: { argv: ["cat", "notes/a.txt"] } });
check(r.structuredContent?.stdout === "written by the agent\n", "the sandbox sees the file");
r = await client.callTool({ name: "read_file", arguments: { path: "../outside" } });
check(r.isError && text(r).includes("CRD4004"), "a path out of the workspace is refused");
r = await client.callTool({ name: "list_files", arguments: { path: "notes" } });
check(!r.isError && text(r).includes("a.txt"), "list_files");

let threw = false;
try {
  await client.callTool({ name: "nonexistent_tool", arguments: {} });
} catch {
  threw = true;
}
check(threw, "an unknown tool is a protocol error");

r = await client.callTool({ name: "execute_command", arguments: {
  argv: ["sh", "-c", "for i in 1 2 3 4 5; do echo line$i; sleep 0.2; done; exec sleep 29.17"],
  run_in_background: true } });
const pid = r.structuredContent?.process_id;
check(!r.isError && typeof pid === "string", `a background command starts (${pid})`);
let since = 0, output = "";
for (let i = 0; i < 100 && !output.includes("line5"); i++) {
  r = await client.callTool({ name: "get_command_output", arguments: { process_id: pid, since } });
  output += r.structuredContent?.output ?? "";
  since = r.structuredContent?.next_offset ?? since;
  await pause(100);
}
check(output === "line1\nline2\nline3\nline4\nline5\n", "its output, polled with since, comes whole and once");
r = await client.callTool({ name: "list_commands", arguments: {} });
check(r.structuredContent?.commands?.some((c) => c.process_id === pid && c.status === "running"),
  "list_commands shows it running");
r = await client.callTool({ name: "stop_command", arguments: { process_id: pid, grace: 1 } });
check(r.structuredContent?.status === "stopped", `stop_command stops it (${r.structuredContent?.status})`);
check(await gone("sleep 29.17"), "nothing of it is left");
r = await client.callTool({ name: "get_command_output", arguments: { process_id: "not-one-of-mine" } });
check(r.isError && text(r).includes("CRD6001"), "a command this server did not start is out of reach");

const marker = "31.4159";
const running = () => alive(`sleep ${marker}`);
const controller = new AbortController();
const started = Date.now();
const call = client.callTool({ name: "execute_command", arguments: { argv: ["sleep", marker] } },
  undefined, { signal: controller.signal });
let seen = false;
for (let i = 0; i < 100 && !seen; i++) {
  seen = running();
  if (!seen) await pause(50);
}
check(seen, "the long command runs");
controller.abort();
let aborted = false;
try {
  await call;
} catch {
  aborted = true;
}
check(aborted && Date.now() - started < 10000, "a long call is cancelled");
check(await gone(`sleep ${marker}`), "the cancelled command's process is gone");
r = await client.callTool({ name: "execute_command", arguments: { argv: ["echo", "after"] } });
check(r.structuredContent?.stdout === "after\n", "the server serves on after a cancellation");

r = await client.callTool({ name: "execute_command", arguments: {
  argv: ["sleep", "28.71"], run_in_background: true } });
check(!r.isError, "another background command starts");
let up = false;
for (let i = 0; i < 100 && !up; i++) {
  up = alive("sleep 28.71");
  if (!up) await pause(50);
}
check(up, "it runs");
await client.close();
check(await gone("sleep 28.71"), "the client went away: the server stopped its background command");
{
  // Under a policy that allows the network, a call may still ask for none.
  const open = new Client({ name: "cordon-test-network", version: "1.0.0" });
  await open.connect(new StdioClientTransport({
    command: cordon, args: ["mcp", "--policy", "generous", "--workspace", workspace], stderr: "inherit" }));
  const count = ["sh", "-c", "grep -c : /proc/net/dev"];
  const wide = await open.callTool({ name: "execute_command", arguments: { argv: count } });
  const narrow = await open.callTool({ name: "execute_command", arguments: { argv: count, network: false } });
  const here = readFileSync("/proc/net/dev", "utf8").split("\n").filter((l) => l.includes(":")).length;
  if (here > 1)
    check(Number(wide.structuredContent?.stdout) === here && narrow.structuredContent?.stdout === "1\n",
      `network: false narrows the policy's network to loopback (${wide.structuredContent?.stdout?.trim()} -> ${narrow.structuredContent?.stdout?.trim()})`);
  else
    console.log("skip network: false: this machine has no interface but loopback to narrow from");
  await open.close();
}
process.exit(failed ? 1 : 0);
