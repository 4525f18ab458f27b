// An external agent on the official openai SDK (Chat Completions) with the
// bundle's tools from OKFBENCH_MCP_URL; `--stream` streams every call.
import { OpenAI, connectTools, noteUsage, readQuestion } from "./sdk.mjs";

const stream = process.argv.includes("--stream");
const question = await readQuestion();
const openai = new OpenAI({ maxRetries: 0, timeout: 20000 });  // OPENAI_BASE_URL and OPENAI_API_KEY from okfbench
const { client, tools, call } = await connectTools();
const schema = tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
const messages = [
  { role: "system", content: "Answer from the bundle; cite concept ids in brackets." },
  { role: "user", content: question.text },
];

async function turn() {
  const request = { model: process.env.OKFBENCH_MODEL, messages, tools: schema };
  if (!stream) {
    const reply = await openai.chat.completions.create(request);
    noteUsage(question, { input: reply.usage.prompt_tokens, output: reply.usage.completion_tokens });
    return reply.choices[0].message;
  }
  const events = await openai.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  const message = { role: "assistant", content: "", tool_calls: [] };
  for await (const chunk of events) {
    if (chunk.usage) noteUsage(question, { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens });
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) continue;
    if (delta.content) message.content += delta.content;
    for (const t of delta.tool_calls ?? []) {
      const slot = (message.tool_calls[t.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      if (t.id) slot.id = t.id;
      if (t.function?.name) slot.function.name += t.function.name;
      if (t.function?.arguments) slot.function.arguments += t.function.arguments;
    }
  }
  if (message.tool_calls.length === 0) delete message.tool_calls;
  return message;
}

for (let i = 0; i < 12; ++i) {
  const message = await turn();
  messages.push(message);
  if (!message.tool_calls?.length) {
    console.log(message.content ?? "");
    break;
  }
  for (const c of message.tool_calls) {
    const text = await call(c.function.name, JSON.parse(c.function.arguments || "{}"));
    messages.push({ role: "tool", tool_call_id: c.id, content: text });
  }
}
await client.close();
