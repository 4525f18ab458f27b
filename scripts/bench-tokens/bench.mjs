// Counts the tokens of every SciFact document (title + "\n" + text, the same
// texts as tests/bench/bench_tokens.cpp) with npm tiktoken, and prints one
// JSON line: {"tokens": N, "bytes": B, "mb_per_s": X} (X = 10^6 bytes per CPU
// second, best of the repetitions, like Google Benchmark's CPU-time rates).
//   node bench.mjs CORPUS_JSONL ENCODING [REPETITIONS]
import { readFileSync } from "node:fs";
import { get_encoding } from "tiktoken";

const [corpusPath, encodingName = "o200k_base", reps = "5"] = process.argv.slice(2);
const texts = readFileSync(corpusPath, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => {
    const doc = JSON.parse(line);
    return `${doc.title}\n${doc.text}`;
  });
const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t, "utf8"), 0);
const encoding = get_encoding(encodingName);

function countAll() {
  let tokens = 0;
  for (const text of texts) tokens += encoding.encode_ordinary(text).length;
  return tokens;
}

let tokens = countAll(); // warm-up
let best = Infinity;
for (let i = 0; i < Number(reps); i++) {
  const start = process.cpuUsage();
  tokens = countAll();
  const used = process.cpuUsage(start);
  best = Math.min(best, (used.user + used.system) / 1e6);
}
encoding.free();
console.log(JSON.stringify({ tokens, bytes, mb_per_s: bytes / best / 1e6 }));
