// An editor, played by the official ACP SDK's client (@agentclientprotocol/sdk), driving
// `corecoder --acp` through the steps a test gives it, and printing what it saw as JSON lines.
//
// Run by tests/it/acp.rs. Its environment:
//   ACP_SDK_PREFIX  the npm prefix the SDK is installed under
//   CORECODER_BIN   the corecoder binary, started with --acp (it inherits this environment)
//   ACP_ARGS        more arguments for it, a JSON array (optional)
//   ACP_STEPS       a JSON array of steps, run in order:
//                     {"do": "initialize"}
//                     {"do": "new", "cwd": DIR, "mcpServers": [...]?} (remembers the sessionId)
//                     {"do": "load", "sessionId": ID, "cwd": DIR}    (remembers ID)
//                     {"do": "mode", "modeId": ID}                    (session/set_mode)
//                     {"do": "prompt", "text": TEXT, "link": URI?, "cancelOnChunk": bool?}
//   ACP_ANSWER      the option a permission request is answered with: an optionId
//                   (allow_once, allow_always, reject_once) or "cancelled"
// Each line printed is one of
//   {"seen": "result", "step": N, "result": ...}      {"seen": "error", "step": N, "error": ...}
//   {"seen": "update", "update": ...}                  {"seen": "permission", "params": ...}
//   {"seen": "cancelled", "ms": TIME FROM session/cancel TO THE PROMPT'S ANSWER}
// It checks nothing itself: the Rust test does.

import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const require = createRequire(join(process.env.ACP_SDK_PREFIX, "package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const print = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const steps = JSON.parse(process.env.ACP_STEPS);
const answer = process.env.ACP_ANSWER ?? "reject_once";

const args = ["--acp", ...JSON.parse(process.env.ACP_ARGS ?? "[]")];
const agent = spawn(process.env.CORECODER_BIN, args, {
  stdio: ["pipe", "pipe", "inherit"],
});
let onChunk = null;

const app = acp
  .client()
  .onNotification("session/update", (ctx) => {
    print({ seen: "update", update: ctx.params.update });
    if (ctx.params.update.sessionUpdate === "agent_message_chunk" && onChunk) {
      const act = onChunk;
      onChunk = null;
      act();
    }
  })
  .onRequest("session/request_permission", (ctx) => {
    print({ seen: "permission", params: ctx.params });
    if (answer === "cancelled") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: answer } };
  });
const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)),
);
const to = connection.agent;

let sessionId = null;
for (const [n, step] of steps.entries()) {
  try {
    let result;
    if (step.do === "initialize") {
      result = await to.request("initialize", {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "corecoder-test", version: "1" },
      });
    } else if (step.do === "new") {
      const mcpServers = step.mcpServers ?? [];
      result = await to.request("session/new", { cwd: step.cwd, mcpServers });
      sessionId = result.sessionId;
    } else if (step.do === "load") {
      sessionId = step.sessionId;
      result = await to.request("session/load", { sessionId, cwd: step.cwd, mcpServers: [] });
    } else if (step.do === "mode") {
      result = await to.request("session/set_mode", { sessionId, modeId: step.modeId });
    } else if (step.do === "prompt") {
      const prompt = [{ type: "text", text: step.text }];
      if (step.link) prompt.push({ type: "resource_link", name: "linked", uri: step.link });
      let cancelledAt = null;
      if (step.cancelOnChunk) {
        onChunk = () => {
          cancelledAt = Date.now();
          to.notify("session/cancel", { sessionId });
        };
      }
      result = await to.request("session/prompt", { sessionId, prompt });
      if (cancelledAt !== null) print({ seen: "cancelled", ms: Date.now() - cancelledAt });
    }
    print({ seen: "result", step: n, result });
  } catch (error) {
    print({ seen: "error", step: n, error: { code: error.code, message: error.message } });
  }
}
connection.close();
agent.stdin.end();
await new Promise((done) => agent.on("exit", done));
