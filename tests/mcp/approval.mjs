// Approval fails closed: with `--approve write,background`, a client that declines (MCP
// elicitation) gets a tool error and nothing is done, one that accepts gets the call run, and a
// client that declared no elicitation capability is refused without being asked; calls of
// other classes run without a question.
//   node approval.mjs CORDON SDK_DIR WORKSPACE
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [cordon, sdk, workspace] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdk, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { ElicitRequestSchema } = await load("types.js");

let failed = 0;
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failed++;
}
const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");

async function connect(capabilities) {
  const transport = new StdioClientTransport({
    command: cordon,
    args: ["mcp", "--policy", "standard", "--workspace", workspace, "--approve", "write,background"],
    stderr: "inherit",
  });
  const client = new Client({ name: "cordon-approval-test", version: "1.0.0" }, { capabilities });
  return { client, transport };
}

let answer = "decline";
const questions = [];
{
  const { client, transport } = await connect({ elicitation: {} });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params.message);
    return answer === "accept" ? { action: "accept", content: { approve: true } } : { action: answer };
  });
  await client.connect(transport);

  let r = await client.callTool({ name: "write_file", arguments: { path: "declined.txt", content: "x" } });
  check(r.isError && text(r).includes("CRD4010") && text(r).includes("declined"), "a declined write is a tool error");
  check(!existsSync(join(workspace, "declined.txt")), "and nothing was written");
  check(questions.length === 1 && questions[0].includes("declined.txt"), "the client was asked, naming the file");

  answer = "accept";
  r = await client.callTool({ name: "write_file", arguments: { path: "approved.txt", content: "y" } });
  check(!r.isError && existsSync(join(workspace, "approved.txt")), "an approved write is done");

  answer = "cancel";
  r = await client.callTool({ name: "execute_command", arguments: { argv: ["true"], run_in_background: true } });
  check(r.isError && text(r).includes("CRD4010"), "a cancelled question refuses the background command");

  const before = questions.length;
  r = await client.callTool({ name: "execute_command", arguments: { argv: ["echo", "plain"] } });
  check(!r.isError && r.structuredContent?.stdout === "plain\n" && questions.length === before,
    "a call of no approval class runs without a question");
  await client.close();
}
{
  const { client, transport } = await connect({});
  await client.connect(transport);
  const r = await client.callTool({ name: "write_file", arguments: { path: "unasked.txt", content: "z" } });
  check(r.isError && text(r).includes("CRD4010") && text(r).includes("cannot be asked"),
    "a client that cannot be asked is refused (fail closed)");
  check(!existsSync(join(workspace, "unasked.txt")), "and nothing was written");
  await client.close();
}
process.exit(failed ? 1 : 0);
