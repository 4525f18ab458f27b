// An external agent on the official @anthropic-ai/sdk (Messages) with the
// bundle's tools from OKFBENCH_MCP_URL; `--stream` streams every call.
import { Anthropic, connectTools, noteUsage, readQuestion } from "./sdk.mjs";

const stream = process.argv.includes("--stream");
const question = await readQuestion();
const anthropic = new Anthropic({ maxRetries: 0, timeout: 20000 });  // ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from okfbench
const { client, tools, call } = await connectTools();
const schema = tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
const messages = [{ role: "user", content: question.text }];

async function turn() {
  const request = { model: process.env.OKFBENCH_MODEL, max_tokens: 1024, system: "Answer from the bundle.", messages, tools: schema };
  const reply = stream ? await anthropic.messages.stream(request).finalMessage() : await anthropic.messages.create(request);
  noteUsage(question, { input: reply.usage.input_tokens + (reply.usage.cache_read_input_tokens ?? 0) + (reply.usage.cache_creation_input_tokens ?? 0),
                        output: reply.usage.output_tokens });
  return reply;
}

for (let i = 0; i < 12; ++i) {
  const reply = await turn();
  messages.push({ role: "assistant", content: reply.content });
  const uses = reply.content.filter((b) => b.type === "tool_use");
  if (uses.length === 0) {
    console.log(reply.content.filter((b) => b.type === "text").map((b) => b.text).join(""));
    break;
  }
  const results = [];
  for (const u of uses) results.push({ type: "tool_result", tool_use_id: u.id, content: await call(u.name, u.input) });
  messages.push({ role: "user", content: results });
}
await client.close();
