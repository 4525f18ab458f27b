// Drives `okfbench mcp` with the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned by package-lock.json beside this file)
// over stdio and over streamable HTTP: list the tools, call each one, read a
// resource, then check what the session log accounted.
//
// Run by ctest (tests/CMakeLists.txt) as
//   OKFBENCH=build/cli/okfbench OKFBENCH_BUNDLE=datasets/bundles/demo OKFBENCH_KB=tests/data/kb \
//   OKFBENCH_TMP=DIR node --test sdk_client.mjs
// (OKFBENCH_KB holds the sales and support bundles served together in the last test).
// HTTP servers bind 127.0.0.1 on a port the system picks (--port 0, printed
// on stdout) and are stopped by PID.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { once } from "node:events";
import { test } from "node:test";

// Imported here rather than statically so that a missing install says what to do.
let sdk;
try {
  sdk = {
    ...(await import("@modelcontextprotocol/sdk/client/index.js")),
    ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
    ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
  };
} catch (e) {
  console.error(`tests/mcp: the MCP SDK is not installed (${e.message}); run scripts/setup.sh (npm ci in tests/mcp)`);
  process.exit(1);
}
const { Client, StdioClientTransport, StreamableHTTPClientTransport } = sdk;

const okfbench = process.env.OKFBENCH;
const demo = process.env.OKFBENCH_BUNDLE;
const tmp = process.env.OKFBENCH_TMP;
const kb = process.env.OKFBENCH_KB;
assert.ok(okfbench && demo && tmp && kb, "set OKFBENCH, OKFBENCH_BUNDLE, OKFBENCH_KB and OKFBENCH_TMP");
fs.mkdirSync(tmp, { recursive: true });
// The SDK's stdio transport passes on only a few variables (not
// XDG_CACHE_HOME), so the index cache is named on the command line.
const indexCache = ["--index-cache", path.join(tmp, "index-cache")];

// One valid call per tool of both surfaces, and what each result must hold.
const calls = {
  browse: [{ layer: "runbooks" }, (r) => JSON.parse(r).concepts.length > 0],
  search: [{ query: "slow query", k: 3 }, (r) => JSON.parse(r).length === 3],
  open: [{ concept_id: "runbooks/slow-queries" }, (r) => JSON.parse(r).id === "runbooks/slow-queries"],
  follow: [{ concept_id: "runbooks/slow-queries" }, (r) => Array.isArray(JSON.parse(r))],
  history: [{}, (r) => JSON.parse(r).length > 0],
  remember: [
    { concept_id: "notes/sdk-note", title: "SDK note", body: "Saved by the MCP SDK test." },
    (r) => JSON.parse(r).saved === "notes/sdk-note",
  ],
  search_concepts: [{ query: "slow query", limit: 2 }, (r) => JSON.parse(r).length === 2],
  read_concept: [{ path: "/runbooks/slow-queries.md" }, (r) => r.includes("path: /runbooks/slow-queries.md")],
  get_neighbors: [{ path: "runbooks/slow-queries" }, (r) => JSON.parse(r).path === "/runbooks/slow-queries.md"],
};

function workdir(name) {
  const dir = fs.mkdtempSync(path.join(tmp, `${name}-`));
  const bundle = path.join(dir, "demo");
  fs.cpSync(demo, bundle, { recursive: true }); // remember writes into it
  return { bundle, log: path.join(dir, "session.jsonl") };
}

// Lists the tools, calls each, reads a resource; returns what was called.
async function exercise(client, expectedTools) {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), expectedTools);
  for (const tool of tools) assert.equal(tool.inputSchema.type, "object", tool.name);
  for (const name of expectedTools) {
    const [args, check] = calls[name];
    const result = await client.callTool({ name, arguments: args });
    assert.equal(result.isError, false, `${name}: ${JSON.stringify(result.content)}`);
    assert.equal(result.content[0].type, "text");
    assert.ok(check(result.content[0].text), `${name} returned ${result.content[0].text.slice(0, 200)}`);
  }
  const failed = await client.callTool({ name: expectedTools.includes("open") ? "open" : "read_concept",
    arguments: expectedTools.includes("open") ? { concept_id: "../../etc/passwd" } : { path: "../../etc/passwd" } });
  assert.equal(failed.isError, true);
  const { resources } = await client.listResources();
  assert.ok(resources.length >= 30);
  const uri = resources.find((r) => r.name === "runbooks/slow-queries").uri;
  assert.equal(uri, "okf://demo/runbooks/slow-queries");
  const read = await client.readResource({ uri });
  assert.match(read.contents[0].text, /^# Triaging a slow graph query/);
  await assert.rejects(client.readResource({ uri: "okf://demo/../../etc/passwd" }), /-32002|not found/);
  assert.deepEqual(await client.ping(), {});
  return expectedTools.length + 2; // tool calls, the failed one and the resource read
}

function checkLog(log, calls, toolCount) {
  const events = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const kinds = events.map((e) => e.event);
  assert.equal(kinds.filter((k) => k === "session").length, 1);
  assert.equal(kinds.filter((k) => k === "tool_list").length, 1);
  const toolList = events.find((e) => e.event === "tool_list");
  assert.equal(toolList.tools, toolCount);
  assert.ok(toolList.tokens.o200k_base > 0 && toolList.tokens.cl100k_base > 0);
  const callEvents = events.filter((e) => e.event === "call");
  assert.equal(callEvents.length, calls);
  for (const e of callEvents) assert.ok(e.bytes > 0 && e.tokens.o200k_base > 0, JSON.stringify(e));
  assert.ok(events.find((e) => e.event === "session").client.startsWith("okfbench-sdk-test"));
  const report = execFileSync(okfbench, ["report", log], { encoding: "utf8" });
  assert.match(report, new RegExp(`1 session\\(s\\) \\(okfbench-sdk-test 1\\.0\\); ${calls} call\\(s\\), 1 with an error`));
  assert.match(report, /\| runbooks\/slow-queries \| 2 \|/); // the tool read and the resource read
}

const client = () => new Client({ name: "okfbench-sdk-test", version: "1.0" });

for (const surface of ["grafito", "harnessx"]) {
  const tools = surface === "grafito"
    ? ["browse", "search", "open", "follow", "history", "remember"]
    : ["search_concepts", "read_concept", "get_neighbors"];

  test(`stdio, ${surface} surface`, { timeout: 60_000 }, async () => {
    const { bundle, log } = workdir(`stdio-${surface}`);
    const transport = new StdioClientTransport({
      command: okfbench,
      args: ["mcp", bundle, "--surface", surface, "--allow-write", "--session-log", log, ...indexCache],
      stderr: "ignore",
    });
    const c = client();
    await c.connect(transport);
    assert.equal(c.getServerVersion().name, "okfbench");
    const n = await exercise(c, tools);
    await c.close();
    checkLog(log, n, tools.length);
    if (surface === "grafito") assert.ok(fs.existsSync(path.join(bundle, "notes", "sdk-note.md")));
  });

  test(`streamable HTTP, ${surface} surface`, { timeout: 60_000 }, async () => {
    const { bundle, log } = workdir(`http-${surface}`);
    const server = spawn(okfbench, ["mcp", bundle, "--surface", surface, "--allow-write", "--transport", "http",
      "--port", "0", "--session-log", log, ...indexCache], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const [line] = await once(server.stdout, "data");
      const port = Number.parseInt(line.toString(), 10);
      assert.ok(port > 0 && port < 65536, `port line: ${line}`);
      const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
      const c = client();
      await c.connect(transport);
      assert.equal(transport.protocolVersion, "2025-06-18");
      assert.ok(transport.sessionId && transport.sessionId.length === 32);
      const n = await exercise(c, tools);
      await transport.terminateSession();
      await c.close();
      checkLog(log, n, tools.length);
    } finally {
      const exited = once(server, "exit");
      process.kill(server.pid, "SIGTERM");
      const [code] = await exited;
      assert.equal(code, 0);
    }
  });
}

// Two bundles served at once: search without `bundle` ranks both in one
// index (the order okfbench search gives for them, engine/README.md), every
// other tool requires `bundle`, results name their bundle, the instructions
// list both, and the session log records the search over both as bundle "*".
test("stdio, several bundles", { timeout: 60_000 }, async () => {
  const log = path.join(fs.mkdtempSync(path.join(tmp, "several-")), "session.jsonl");
  const transport = new StdioClientTransport({
    command: okfbench,
    args: ["mcp", path.join(kb, "sales"), path.join(kb, "support"), "--surface", "harnessx", "--session-log", log,
      ...indexCache],
    stderr: "ignore",
  });
  const c = client();
  await c.connect(transport);
  assert.match(c.getInstructions(), /sales/);
  assert.match(c.getInstructions(), /support/);
  const { tools } = await c.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
  assert.deepEqual(byName.search_concepts.properties.bundle.enum, ["sales", "support"]);
  assert.deepEqual(byName.search_concepts.required, ["query"]);
  assert.ok(byName.read_concept.required.includes("bundle"));
  const text = async (name, args) => {
    const r = await c.callTool({ name, arguments: args });
    return { error: r.isError, text: r.content[0].text };
  };
  const both = await text("search_concepts", { query: "refund revenue", limit: 3 });
  assert.equal(both.error, false);
  assert.deepEqual(JSON.parse(both.text).map((h) => `${h.bundle}:${h.path}`),
    ["support:/runbooks/refunds.md", "support:/runbooks/escalation.md", "sales:/metrics/revenue.md"]);
  const sales = await text("search_concepts", { query: "refund revenue", limit: 3, bundle: "sales" });
  assert.deepEqual(JSON.parse(sales.text).map((h) => h.bundle), ["sales", "sales", "sales"]);
  const unnamed = await text("read_concept", { path: "runbooks/refunds" });
  assert.equal(unnamed.error, true);
  assert.match(unnamed.text, /'bundle' is required when several bundles are loaded; one of: sales, support/);
  const read = await text("read_concept", { path: "runbooks/refunds", bundle: "support" });
  assert.equal(read.error, false);
  assert.match(read.text, /\nbundle: support\n/);
  await c.close();
  const calls = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.event === "call");
  assert.deepEqual(calls.map((e) => [e.tool, e.access.bundle]),
    [["search_concepts", "*"], ["search_concepts", "sales"], ["read_concept", ""], ["read_concept", "support"]]);
  assert.deepEqual(calls[0].access.concepts, ["support:runbooks/refunds", "support:runbooks/escalation", "sales:metrics/revenue"]);
  const report = execFileSync(okfbench, ["report", log], { encoding: "utf8" });
  assert.match(report, /\| support:runbooks\/refunds \| 1 \|/);
});
