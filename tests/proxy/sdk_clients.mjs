// Drives `okfbench proxy` in front of `okfbench mock-server` with the
// official SDK clients (npm openai and @anthropic-ai/sdk, pinned by
// package-lock.json beside this file), streaming and not, and checks the
// proxy's log against what the mock reported and against an independent
// count of the re-sent prefix; then the faults: a stream cut mid-way, an
// upstream that goes silent, a client that leaves, each a logged error while
// the proxy keeps serving.
//
// Run by ctest (tests/CMakeLists.txt) as
//   OKFBENCH=build/cli/okfbench OKFBENCH_TMP=DIR node --test sdk_clients.mjs
// Servers bind 127.0.0.1 on ports the system picks (--port 0, printed on
// stdout) and are stopped by PID.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { test } from "node:test";

let OpenAI, Anthropic;
try {
  OpenAI = (await import("openai")).default;
  Anthropic = (await import("@anthropic-ai/sdk")).default;
} catch (e) {
  console.error(`tests/proxy: the SDKs are not installed (${e.message}); run scripts/setup.sh (npm ci in tests/proxy)`);
  process.exit(1);
}

const okfbench = process.env.OKFBENCH;
const tmp = process.env.OKFBENCH_TMP;
assert.ok(okfbench && tmp, "set OKFBENCH and OKFBENCH_TMP");
fs.mkdirSync(tmp, { recursive: true });
const key = "sk-sdk-test-KEY-abcdef123456";

// Starts an okfbench server on --port 0 and resolves with {child, port} once it printed its port.
function serve(args) {
  const child = spawn(okfbench, [...args, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    lines.once("line", (line) => resolve({ child, port: Number(line) }));
    child.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${stderr}`)));
  });
}

async function gateway(name, { fault = "", proxyArgs = [] } = {}) {
  const dir = fs.mkdtempSync(path.join(tmp, `${name}-`));
  const log = path.join(dir, "proxy.jsonl");
  const mock = await serve(["mock-server", ...(fault ? ["--fault", fault] : [])]);
  const proxy = await serve(["proxy", "--upstream", `http://127.0.0.1:${mock.port}`, "--log", log, ...proxyArgs]);
  const url = `http://127.0.0.1:${proxy.port}`;
  return {
    openai: new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 20000 }),
    anthropic: new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0, timeout: 20000 }),
    // The log's records once `count` are written (a stream's is written as it ends).
    async records(count) {
      for (let i = 0; i < 200; i++) {
        const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
        const lines = text.split("\n").filter(Boolean);
        if (lines.length >= count) {
          assert.ok(!text.includes(key), "the API key reached the log");
          return lines.map((l) => JSON.parse(l));
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.fail(`fewer than ${count} records in ${log}`);
    },
    stop() {
      proxy.child.kill("SIGTERM");
      mock.child.kill("SIGTERM");
    },
  };
}

// Tokens of a text with the project's BPE, counted by `okfbench tokens`, not by the proxy.
function tokens(text) {
  return Number(execFileSync(okfbench, ["tokens", "-"], { input: text }).toString().trim());
}

const system = "You answer questions about database operations in two sentences.";
const question = "A Cypher query got slow after a replica change. What should I do?";

test("OpenAI SDK: usage as the mock reported it, re-sent tokens as counted independently", async () => {
  const g = await gateway("openai");
  try {
    const first = [
      { role: "system", content: system },
      { role: "user", content: question },
    ];
    const a = await g.openai.chat.completions.create({ model: "gpt-4o", messages: first });
    const follow = "And if the lag stays?";
    const second = [...first, { role: "assistant", content: a.choices[0].message.content }, { role: "user", content: follow }];
    const b = await g.openai.chat.completions.create({ model: "gpt-4o", messages: second });
    const [ra, rb] = await g.records(2);
    assert.equal(ra.usage.input_tokens, a.usage.prompt_tokens);
    assert.equal(ra.usage.output_tokens, a.usage.completion_tokens);
    assert.equal(rb.usage.input_tokens, b.usage.prompt_tokens);
    assert.equal(rb.usage.cached_input_tokens, b.usage.prompt_tokens_details?.cached_tokens ?? null);
    assert.equal(rb.conversation, ra.conversation);
    assert.equal(rb.turn, 2);
    assert.equal(rb.resent_tokens, tokens(system) + tokens(question));
    assert.equal(rb.request_tokens, tokens(system) + tokens(question) + tokens(a.choices[0].message.content) + tokens(follow));
    assert.deepEqual(rb.errors, []);
  } finally {
    g.stop();
  }
});

test("OpenAI SDK streaming: usage from the include_usage chunk, unknown without it", async () => {
  const g = await gateway("openai-stream");
  try {
    const messages = [{ role: "user", content: question }];
    const stream = await g.openai.chat.completions.create({
      model: "gpt-4o", messages, stream: true, stream_options: { include_usage: true },
    });
    let usage = null, text = "";
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    assert.ok(usage && text.length > 0);
    const bare = await g.openai.chat.completions.create({ model: "gpt-4o", messages, stream: true });
    for await (const chunk of bare) assert.equal(chunk.usage ?? null, null);
    const [with_, without] = await g.records(2);
    assert.equal(with_.usage.input_tokens, usage.prompt_tokens);
    assert.equal(with_.usage.output_tokens, usage.completion_tokens);
    assert.ok(with_.events > 3 && with_.first_token_ms !== null);
    assert.equal(without.usage, null);
    assert.match(without.usage_unknown, /include_usage/);
    assert.equal(without.turn, 2, "the same messages again: a retry re-sends all of it");
    assert.equal(without.resent_tokens, tokens(question));
  } finally {
    g.stop();
  }
});

test("Anthropic SDK, streamed and not: usage from message_start and message_delta", async () => {
  const g = await gateway("anthropic");
  try {
    const request = { model: "claude-sonnet-4-5", max_tokens: 300, system, messages: [{ role: "user", content: question }] };
    const whole = await g.anthropic.messages.create(request);
    const stream = g.anthropic.messages.stream({ ...request, messages: [{ role: "user", content: "Why is the replica lagging?" }] });
    const streamed = await stream.finalMessage();
    const [rw, rs] = await g.records(2);
    const input = (u) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    assert.equal(rw.usage.input_tokens, input(whole.usage));
    assert.equal(rw.usage.output_tokens, whole.usage.output_tokens);
    assert.equal(rs.stream, true);
    assert.equal(rs.usage.input_tokens, input(streamed.usage));
    assert.equal(rs.usage.output_tokens, streamed.usage.output_tokens);
    assert.notEqual(rs.conversation, rw.conversation, "another question with the same system prompt is another conversation");
    assert.equal(rw.request_tokens, tokens(system) + tokens(question));
  } finally {
    g.stop();
  }
});

test("a stream cut mid-way is a logged error and the proxy keeps serving", async () => {
  const g = await gateway("cut", { fault: "cut:1:3" });
  try {
    await assert.rejects(async () => {
      const s = await g.openai.chat.completions.create({
        model: "gpt-4o", messages: [{ role: "user", content: question }], stream: true, stream_options: { include_usage: true },
      });
      for await (const _ of s);
      // An SDK that takes a cut stream for a short one ends here without [DONE]; the log still says so.
      throw new Error("stream ended early");
    });
    const ok = await g.openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    assert.ok(ok.choices.length > 0);
    const [cut, next] = await g.records(2);
    assert.ok(cut.errors.length > 0, JSON.stringify(cut));
    assert.deepEqual(next.errors, []);
  } finally {
    g.stop();
  }
});

test("an upstream that goes silent is a logged error (504 before the reply, a cut stream after)", async () => {
  const g = await gateway("silent", { fault: "stall:1:30,gap:1:30", proxyArgs: ["--idle-timeout-s", "1"] });
  try {
    await assert.rejects(g.anthropic.messages.create({ model: "c", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
      (e) => e.status === 504);
    await assert.rejects(async () => {
      const s = g.anthropic.messages.stream({ model: "c", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
      await s.finalMessage();
    });
    const ok = await g.anthropic.messages.create({ model: "c", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    assert.ok(ok.content.length > 0);
    const [stalled, gapped, next] = await g.records(3);
    assert.equal(stalled.status, 504);
    assert.match(JSON.stringify(gapped.errors), /silent/);
    assert.deepEqual(next.errors, []);
  } finally {
    g.stop();
  }
});

test("a client that leaves mid-stream is a logged error and the proxy keeps serving", async () => {
  const g = await gateway("leave", { fault: "gap:1:3" });
  try {
    const controller = new AbortController();
    const s = await g.openai.chat.completions.create(
      { model: "gpt-4o", messages: [{ role: "user", content: question }], stream: true },
      { signal: controller.signal });
    let chunks = 0;
    try {
      for await (const _ of s) {
        chunks++;
        controller.abort();  // the SDK either ends the loop or throws an abort error
      }
    } catch (e) {
      assert.match(String(e), /abort/i);
    }
    assert.equal(chunks, 1);
    const ok = await g.openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    assert.ok(ok.choices.length > 0);
    const records = await g.records(2);
    const left = records.find((r) => r.stream);
    assert.match(JSON.stringify(left.errors), /disconnected/);
  } finally {
    g.stop();
  }
});
