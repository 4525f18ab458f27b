// The official SDKs for the example external agents, loaded from where
// scripts/setup.sh installs them (tests/proxy and tests/mcp, npm ci).
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const tests = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const load = (file) => import(pathToFileURL(path.join(tests, file)).href);

export const OpenAI = (await load("proxy/node_modules/openai/index.mjs")).default;
export const Anthropic = (await load("proxy/node_modules/@anthropic-ai/sdk/index.mjs")).default;
export const { Client } = await load("mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js");
export const { StreamableHTTPClientTransport } = await load(
  "mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js");

// The question okfbench writes on stdin: {id, text, bundle, model, trial_key}.
export async function readQuestion() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text);
}

// The bundle's tools over OKFBENCH_MCP_URL, one session for the trial.
export async function connectTools() {
  const client = new Client({ name: "okfbench-example-agent", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.OKFBENCH_MCP_URL)));
  const { tools } = await client.listTools();
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    return (result.content ?? []).map((c) => c.text ?? "").join("");
  };
  return { client, tools, call };
}

// What the SDK received, one JSON line per model call, for the test to compare
// with the trial record (AGENT_USAGE_LOG, when the test sets it).
import fs from "node:fs";
export function noteUsage(question, usage) {
  if (!process.env.AGENT_USAGE_LOG) return;
  fs.appendFileSync(process.env.AGENT_USAGE_LOG, JSON.stringify({ trial: question.trial_key, ...usage }) + "\n");
}
