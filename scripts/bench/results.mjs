// Writes tests/bench/RESULTS.md (to stdout) from what scripts/bench.sh
// collected in WORK: machine.txt (key=value lines), one Google Benchmark JSON
// file per program of tests/bench, and the text output of the whole-program
// scripts. Each figure is stated as a ratio against a baseline measured in the
// same run wherever one exists; a figure whose rows are missing (no reference
// data, a failed program) is listed as not measured, never guessed.
//   node scripts/bench/results.mjs WORK > tests/bench/RESULTS.md
import fs from "node:fs";
import path from "node:path";

const work = process.argv[2];
if (!work) {
  console.error("usage: node scripts/bench/results.mjs WORK");
  process.exit(2);
}

const machine = Object.fromEntries(
  fs.readFileSync(path.join(work, "machine.txt"), "utf8").split("\n").filter((l) => l.includes("="))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));

// Benchmark rows by run name: the single iteration row, or the median of
// repetitions (--full). Times are in milliseconds.
const toMs = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3 };
const programs = {};
const failures = [];
for (const file of fs.readdirSync(work).filter((f) => f.endsWith(".json")).sort()) {
  const program = file.replace(/\.json$/, "");
  let json;
  try {
    json = JSON.parse(fs.readFileSync(path.join(work, file), "utf8"));
  } catch (e) {
    failures.push(`${program}: no results (${e.message})`);
    continue;
  }
  const rows = new Map();
  for (const b of json.benchmarks) {
    if (b.error_occurred) {
      failures.push(`${program} ${b.run_name}: ${b.error_message}`);
      continue;
    }
    const median = b.run_type === "aggregate" && b.aggregate_name === "median";
    if (b.run_type === "aggregate" && !median && b.aggregate_name !== "BigO") continue;
    const key = b.aggregate_name === "BigO" ? `${b.run_name}_BigO` : b.run_name;
    if (!median && rows.has(key)) continue;
    const scale = toMs[b.time_unit] ?? 1;
    rows.set(key, { ...b, wall_ms: b.real_time * scale, cpu_ms: b.cpu_time * scale });
  }
  programs[program] = { rows, context: json.context };
}
for (const program of ["bench_bundle", "bench_tokens", "bench_search", "bench_context", "bench_agents",
  "bench_runner", "bench_measures", "bench_reports"]) {
  if (!programs[program]) failures.push(`${program}: did not run or wrote no results`);
}

class Missing extends Error {}
function row(program, name) {
  const r = programs[program]?.rows.get(name);
  if (!r) throw new Missing(`${program} ${name}`);
  return r;
}
function counter(r, key) {
  if (typeof r[key] !== "number") throw new Missing(`${r.run_name} ${key}`);
  return r[key];
}
function textOf(file) {
  const p = path.join(work, file);
  if (!fs.existsSync(p)) throw new Missing(file);
  return fs.readFileSync(p, "utf8");
}
function fromText(file, pattern) {
  const m = textOf(file).match(pattern);
  if (!m) throw new Missing(`${file}: ${pattern}`);
  return Number(m[1]);
}

// Three significant digits, thousands separated.
function num(x) {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 1000) return Math.round(Number(x.toPrecision(3))).toLocaleString("en-US");
  return Number(x.toPrecision(3)).toLocaleString("en-US", { maximumSignificantDigits: 3 });
}
const ms = (x) => (x >= 1000 ? `${num(x / 1000)} s` : x >= 1 ? `${num(x)} ms` : `${num(x * 1000)} µs`);
const times = (x) => `**${num(x)}×**`;
// Measured against baseline where less is better (time, CPU): "N× faster"
// or, when the baseline won in this run, "N× slower".
function faster(measured, baseline, better = "faster", worse = "slower") {
  const r = baseline / measured;
  return r >= 1 ? `${times(r)} ${better}` : `${times(1 / r)} ${worse}`;
}
const cheaper = (measured, baseline) => faster(measured, baseline, "less CPU", "more CPU");

// A figure: what is measured, the value, the baseline measured in the same
// run ("" where none exists), and the ratio between them.
const sections = [];
function section(title, intro, figures) {
  const lines = [`## ${title}`, "", intro, "", "| figure | measured | baseline (same run) | ratio |", "|---|---|---|---|"];
  for (const [what, compute] of figures) {
    try {
      const [measured, baseline = "", ratio = ""] = compute();
      lines.push(`| ${what} | ${measured} | ${baseline || "none"} | ${ratio || "n/a"} |`);
    } catch (e) {
      if (!(e instanceof Missing)) throw e;
      lines.push(`| ${what} | not measured (missing: ${e.message}) | | |`);
    }
  }
  sections.push(lines.join("\n"));
}

section("Bundle loading", "`tests/bench/bench_bundle.cpp` loads the tldr pages (repo profile: walk, read, parse, links) " +
  "and reads the same files alone; `scripts/bench-load.sh` runs the whole program against Node.js only reading the files. " +
  "CPU per page counts every thread of the process.", [
  ["`Bundle::load`, tldr pages, 2 threads, io_uring: CPU per page against reading each file alone (1 thread, io_uring)", () => {
    const load = row("bench_bundle", "BM_LoadTldrPages/threads:2/io_uring:1/real_time");
    const read = row("bench_bundle", "BM_ReadTldrFiles/io_uring:1/real_time");
    const a = counter(load, "cpu_us_per_concept"), b = counter(read, "cpu_us_per_file");
    return [`${num(a)} µs CPU per page (${num(counter(load, "items_per_second"))} pages/s wall, ${num(counter(load, "concepts"))} pages)`,
      `${num(b)} µs CPU per file`, `${num(a / b)}× the CPU of reading`];
  }],
  ["the same load on 2 threads against 1 thread (wall time)", () => {
    const two = row("bench_bundle", "BM_LoadTldrPages/threads:2/io_uring:1/real_time");
    const one = row("bench_bundle", "BM_LoadTldrPages/threads:1/io_uring:1/real_time");
    return [ms(two.wall_ms), ms(one.wall_ms), faster(two.wall_ms, one.wall_ms)];
  }],
  ["the load on 2 threads with io_uring against plain system calls (wall time)", () => {
    const on = row("bench_bundle", "BM_LoadTldrPages/threads:2/io_uring:1/real_time");
    const off = row("bench_bundle", "BM_LoadTldrPages/threads:2/io_uring:0/real_time");
    return [ms(on.wall_ms), ms(off.wall_ms), faster(on.wall_ms, off.wall_ms)];
  }],
  ["reading alone through io_uring against `open`+`fstat`+`read`+`close` (CPU per file)", () => {
    const on = counter(row("bench_bundle", "BM_ReadTldrFiles/io_uring:1/real_time"), "cpu_us_per_file");
    const off = counter(row("bench_bundle", "BM_ReadTldrFiles/io_uring:0/real_time"), "cpu_us_per_file");
    return [`${num(on)} µs`, `${num(off)} µs`, cheaper(on, off)];
  }],
  ["whole program `okfbench validate --profile repo` on the tldr pages against Node.js walking and reading them (best wall time)", () => {
    const ours = fromText("bench-load.txt", /okfbench validate --profile repo\s+([\d.]+) s/);
    const node = fromText("bench-load.txt", /node: walk \+ readFileSync only\s+([\d.]+) s/);
    return [`${num(ours)} s`, `${num(node)} s`, faster(ours, node)];
  }],
  ["`Bundle::load`, SciFact converted (5,183 concepts, default profile)", () => {
    const r = row("bench_search", "BM_SciFactBundleLoad/process_time/real_time");
    return [`${ms(r.wall_ms)} wall, ${ms(r.cpu_ms)} process CPU (${num(counter(r, "concepts_per_s"))} concepts/s)`];
  }],
  ["`Bundle::load`, the demo bundle (okf profile)", () => {
    const r = row("bench_bundle", "BM_LoadDemoBundle/real_time");
    return [`${ms(r.wall_ms)} for ${num(counter(r, "concepts"))} concepts`];
  }],
]);

section("Token counting", "`tests/bench/bench_tokens.cpp` on every SciFact document (title + text), single-threaded, " +
  "rates per CPU second after one warm-up pass; `scripts/bench-tokens.sh` counts the same texts with npm tiktoken " +
  "(the Rust tiktoken compiled to WASM) and fails unless both give the same total.", [
  ["`BpeEncoding::count`, o200k_base, against npm tiktoken", () => {
    const ours = fromText("bench-tokens.txt", /okfbench BpeEncoding::count\s+([\d.]+) MB\/s/);
    const theirs = fromText("bench-tokens.txt", /npm tiktoken \S+ \(WASM\)\s+([\d.]+) MB\/s/);
    const tokens = fromText("bench-tokens.txt", /okfbench BpeEncoding::count\s+[\d.]+ MB\/s\s+\((\d+) tokens\)/);
    return [`${num(ours)} MB/s (${tokens.toLocaleString("en-US")} tokens, the same as tiktoken's)`, `${num(theirs)} MB/s`, faster(1 / ours, 1 / theirs)];
  }],
  ["count, cl100k_base against o200k_base", () => {
    const o = row("bench_tokens", "BM_Count/o200k_base"), c = row("bench_tokens", "BM_Count/cl100k_base");
    return [`${num(counter(c, "bytes_per_second") / 1e6)} MB/s`, `${num(counter(o, "bytes_per_second") / 1e6)} MB/s`,
      `${num(c.cpu_ms / o.cpu_ms)}× the time`];
  }],
  ["token ids (`encode_ordinary`) against counting only, o200k_base", () => {
    const e = row("bench_tokens", "BM_Encode/o200k_base"), c = row("bench_tokens", "BM_Count/o200k_base");
    return [`${num(counter(e, "bytes_per_second") / 1e6)} MB/s`, `${num(counter(c, "bytes_per_second") / 1e6)} MB/s`,
      `${num(e.cpu_ms / c.cpu_ms)}× the time`];
  }],
  ["pre-tokenizer: the hand-written scanner against PCRE2 JIT with the published pattern", () => {
    const s = row("bench_tokens", "BM_Split/scanner"), p = row("bench_tokens", "BM_Split/pcre2");
    return [`${num(counter(s, "bytes_per_second") / 1e6)} MB/s`, `${num(counter(p, "bytes_per_second") / 1e6)} MB/s`,
      faster(s.cpu_ms, p.cpu_ms)];
  }],
  ["one 100,000-letter piece against one of 4,096 (rate; the merge is O(n log n))", () => {
    const big = row("bench_tokens", "BM_LongRunOfOneLetter/100000"), small = row("bench_tokens", "BM_LongRunOfOneLetter/4096");
    const fit = row("bench_tokens", "BM_LongRunOfOneLetter_BigO");
    return [`${num(counter(big, "bytes_per_second") / 1e6)} MB/s (${ms(big.cpu_ms)} CPU; Google Benchmark's fit over 1 kB to 100 kB: ${fit.big_o})`,
      `${num(counter(small, "bytes_per_second") / 1e6)} MB/s`, `${num(counter(big, "bytes_per_second") / counter(small, "bytes_per_second"))}× the rate`];
  }],
]);

const p50 = (r) => counter(r, "p50_us");
section("Search", "`tests/bench/bench_search.cpp`: SciFact's 5,183 documents and 300 test queries, and 100,000 documents " +
  "made by repeating SciFact with new ids. Query rows are p50 of wall time per query; build rows wall and process CPU " +
  "(the build tokenises on every core). The baseline for BM25F is the flat Lucene-style configuration " +
  "(porter stemmer, stop words) of the same index.", [
  ["SciFact query, top 10: BM25F (fields) against flat BM25 (p50)", () => {
    const f = row("bench_search", "BM_SciFactQuery/0/10"), l = row("bench_search", "BM_SciFactQuery/1/10");
    return [`${num(p50(f))} µs`, `${num(p50(l))} µs`, `${num(p50(f) / p50(l))}× the time`];
  }],
  ["SciFact query, flat: top 1,000 against top 10 (p50)", () => {
    const k = row("bench_search", "BM_SciFactQuery/1/1000"), t = row("bench_search", "BM_SciFactQuery/1/10");
    return [`${num(p50(k))} µs`, `${num(p50(t))} µs`, `${num(p50(k) / p50(t))}× the time`];
  }],
  ["BM25F top 10 on 100,000 documents against SciFact's 5,183 (p50)", () => {
    const big = row("bench_search", "BM_Scale100kQuery/0/10"), small = row("bench_search", "BM_SciFactQuery/0/10");
    return [`${num(p50(big))} µs`, `${num(p50(small))} µs`, `${num(p50(big) / p50(small))}× the time for 19.3× the documents`];
  }],
  ["index build, SciFact: BM25F against flat (process CPU)", () => {
    const f = row("bench_search", "BM_SciFactBuild/0/process_time/real_time"), l = row("bench_search", "BM_SciFactBuild/1/process_time/real_time");
    return [`${ms(f.cpu_ms)} CPU, ${ms(f.wall_ms)} wall`, `${ms(l.cpu_ms)} CPU`, `${num(f.cpu_ms / l.cpu_ms)}× the CPU`];
  }],
  ["index build, BM25F: 100,000 documents against SciFact (process CPU)", () => {
    const big = row("bench_search", "BM_Scale100kBuild/0/iterations:3/process_time/real_time");
    const small = row("bench_search", "BM_SciFactBuild/0/process_time/real_time");
    return [`${ms(big.cpu_ms)} CPU, ${ms(big.wall_ms)} wall`, `${ms(small.cpu_ms)} CPU`,
      `${num(big.cpu_ms / small.cpu_ms)}× the CPU for 19.3× the documents`];
  }],
]);

section("context()", "`tests/bench/bench_context.cpp`: one context pack (budget 2,000 o200k_base tokens) on the SciFact " +
  "bundle for each SciFact query in turn, index built beforehand. The baseline is the weaver strategy, okfbench's " +
  "reproduction of contextweaver's `select_knowledge`, which scores every concept for every query.", [
  ["grafito against weaver, p50 per call (thread CPU)", () => {
    const g = row("bench_context", "BM_ContextScifact/grafito/iterations:1109"), w = row("bench_context", "BM_ContextScifact/weaver/iterations:20");
    return [`${num(counter(g, "p50_cpu_us"))} µs CPU, ${num(counter(g, "p50_us"))} µs wall, ${num(counter(g, "pack_tokens"))} tokens a pack`,
      `${ms(counter(w, "p50_cpu_us") / 1000)} CPU, ${num(counter(w, "pack_tokens"))} tokens a pack`,
      faster(counter(g, "p50_cpu_us"), counter(w, "p50_cpu_us"))];
  }],
]);

section("The agent path", "`tests/bench/bench_agents.cpp`: the sim model's accounting of one more call on a conversation " +
  "whose earlier messages it has counted, against counting the whole request from scratch (CPU time); " +
  "`tests/bench/bench_runner.cpp` on the 10,000-concept generated bundle.", [
  ...[4, 16, 64].map((n) => [`one more sim call, conversation of ${n} tool results: incremental against from scratch`, () => {
    const inc = row("bench_agents", `BM_SimCallIncremental/${n}`), fresh = row("bench_agents", `BM_SimCountFresh/${n}`);
    return [`${ms(inc.cpu_ms)} (${inc.label})`, ms(fresh.cpu_ms), cheaper(inc.cpu_ms, fresh.cpu_ms)];
  }]),
  ["sim on one agent trial's recorded requests (policy, BPE counts, cache model) against the policy alone (CPU)", () => {
    const all = row("bench_runner", "BM_SimCallsOfATrial"), policy = row("bench_runner", "BM_SimPolicyOfATrial");
    return [ms(all.cpu_ms), ms(policy.cpu_ms), `${num(all.cpu_ms / policy.cpu_ms)}× the time`];
  }],
  ["one agent trial (six tools) against one context trial (pack + one sim call), CPU", () => {
    const a = row("bench_runner", "BM_AgentTrial10k"), c = row("bench_runner", "BM_ContextTrial10k");
    return [`${ms(a.cpu_ms)} (${num(counter(a, "turns_per_trial"))} turns)`, ms(c.cpu_ms), `${num(a.cpu_ms / c.cpu_ms)}× the time`];
  }],
]);

section("The runner", "`tests/bench/bench_runner.cpp`: the default experiment end to end with sim (bundles generated " +
  "beforehand into a cache), the generator, and the parts of a trial. No other program does this work, so these " +
  "are absolute figures; the shares split the same run.", [
  ["default experiment (`datasets/experiments/default.yaml`), bundles cached", () => {
    const r = row("bench_runner", "BM_DefaultExperiment/iterations:1/real_time");
    return [`${num(counter(r, "trials"))} trials in ${ms(r.wall_ms)}: setup ${num(counter(r, "setup_s"))} s, trials ${num(counter(r, "trials_s"))} s ` +
      `(${num(counter(r, "trials_per_s"))} trials/s), reports ${num(counter(r, "reports_s"))} s`, "",
      `model ${num(100 * counter(r, "model_share"))}% and retrieval ${num(100 * counter(r, "retrieval_share"))}% of trial time`];
  }],
  ["generator, 10,000 and 100,000 concepts (2 writer threads)", () => {
    const a = row("bench_runner", "BM_Generate/10000/iterations:1/real_time"), b = row("bench_runner", "BM_Generate/100000/iterations:1/real_time");
    return [`${num(counter(a, "concepts_per_s"))} and ${num(counter(b, "concepts_per_s"))} concepts/s`];
  }],
  ["load and index the 10,000-concept bundle", () => {
    const r = row("bench_runner", "BM_LoadAndIndex10k/iterations:3/real_time");
    return [`${ms(r.wall_ms)} wall`];
  }],
  ["store one trial (SQLite insert + JSONL append)", () => [ms(row("bench_runner", "BM_StoreTrial").cpu_ms) + " CPU"]],
]);

section("Measures and statistics", "`tests/bench/bench_measures.cpp` (CPU time): trec_eval's measures on the Cranfield " +
  "FTS5 run from the reference data, a synthetic 300-query × 1,000-document run, and the paired statistics over 300 " +
  "questions with 10,000 permutations or resamples. Reading the run file is the baseline under evaluating it.", [
  ["all 96 `all_trec` measures, 225 queries × 100 documents, against reading that run file", () => {
    const e = row("bench_measures", "BM_EvaluateAllTrecCranfield"), r = row("bench_measures", "BM_ReadRunFile");
    return [ms(e.cpu_ms), ms(r.cpu_ms), `${num(e.cpu_ms / r.cpu_ms)}× reading`];
  }],
  ["nDCG@10 and R@100, 300 queries × 1,000 documents", () => [ms(row("bench_measures", "BM_EvaluateNdcg10Recall100Synthetic").cpu_ms)]],
  ["randomization test and bootstrap interval against the paired t-test, 300 questions", () => {
    const rt = row("bench_measures", "BM_RandomizationTest300"), bs = row("bench_measures", "BM_BootstrapInterval300");
    const t = row("bench_measures", "BM_PairedTTest300");
    return [`${ms(rt.cpu_ms)} and ${ms(bs.cpu_ms)}`, ms(t.cpu_ms), `${num(rt.cpu_ms / t.cpu_ms)}× and ${num(bs.cpu_ms / t.cpu_ms)}× the time`];
  }],
]);

section("Reports", "`tests/bench/bench_reports.cpp` (CPU time) on 10,000 synthetic trial records shaped like the " +
  "default experiment's. Parsing `results.jsonl` is the baseline the other steps are set against.", [
  ["parse 10,000 records from `results.jsonl`", () => {
    const r = row("bench_reports", "BM_ParseResultsJsonl/10000");
    return [`${ms(r.cpu_ms)} (${num(counter(r, "items_per_second"))} records/s, ${num(counter(r, "bytes_per_second") / 1e6)} MB/s)`];
  }],
  ["summarize them into the headline rows, against parsing them", () => {
    const s = row("bench_reports", "BM_Summarize/10000"), p = row("bench_reports", "BM_ParseResultsJsonl/10000");
    return [ms(s.cpu_ms), ms(p.cpu_ms), `${num(s.cpu_ms / p.cpu_ms)}× the time`];
  }],
  ["write the Markdown and the HTML report, against parsing", () => {
    const m = row("bench_reports", "BM_MarkdownReport/10000"), h = row("bench_reports", "BM_HtmlReport/10000");
    const p = row("bench_reports", "BM_ParseResultsJsonl/10000");
    return [`${ms(m.cpu_ms)} and ${ms(h.cpu_ms)}`, ms(p.cpu_ms), `${num(m.cpu_ms / p.cpu_ms)}× and ${num(h.cpu_ms / p.cpu_ms)}× the time`];
  }],
]);

// Every row as measured, per program.
function allRows() {
  const lines = ["## Every benchmark row", "",
    "Wall and CPU time per iteration as Google Benchmark reports them (medians of the repetitions with `--full`), " +
    "with the counters each benchmark sets.", ""];
  for (const [program, { rows }] of Object.entries(programs)) {
    lines.push(`### ${program}`, "", "| benchmark | wall | CPU | iterations | counters |", "|---|--:|--:|--:|---|");
    const skip = new Set(["name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
      "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "wall_ms", "cpu_ms",
      "aggregate_name", "aggregate_unit", "label", "error_occurred", "error_message"]);
    for (const [name, r] of rows) {
      if (r.aggregate_name === "BigO") {
        lines.push(`| ${name} | ${num(r.real_coefficient)} ${r.big_o} | ${num(r.cpu_coefficient)} ${r.big_o} | | fitted complexity |`);
        continue;
      }
      const counters = Object.entries(r).filter(([k, v]) => !skip.has(k) && typeof v === "number").map(([k, v]) => `${k}=${num(v)}`);
      if (r.label) counters.unshift(r.label);
      lines.push(`| ${name} | ${ms(r.wall_ms)} | ${ms(r.cpu_ms)} | ${r.iterations} | ${counters.join(", ")} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

function wholePrograms() {
  const parts = [];
  for (const [file, title] of [["bench-load.txt", "scripts/bench-load.sh"], ["bench-tokens.txt", "scripts/bench-tokens.sh"],
    ["bench-index.txt", "scripts/bench-index.sh --concepts 100000 (the persistent index)"],
    ["bench-index-1m.txt", "scripts/bench-index.sh --concepts 1000000"],
    ["bench-explorer.txt", "scripts/bench-explorer.sh (report.html's explorer in Chromium)"]]) {
    const p = path.join(work, file);
    if (fs.existsSync(p)) parts.push(`### ${title}`, "", "```", fs.readFileSync(p, "utf8").trimEnd(), "```", "");
  }
  return parts.length ? ["## Whole-program scripts, as printed", "", ...parts].join("\n") : "";
}

const memoryGiB = Number(machine.memory_kib) / 1048576;
const libraryBuild = Object.values(programs)[0]?.context?.library_build_type;
const out = [
  "# Measured figures",
  "",
  `Written by \`${machine.command}\` (${machine.seconds} s); do not edit by hand, run it again. ` +
  "Absolute times differ by 2× and more between the machines of this project and with the load on a " +
  "shared machine, so each figure is set against a baseline measured in the same run wherever one exists; " +
  "CPU times are used where the load would distort wall times.",
  "",
  "| machine | |",
  "|---|---|",
  `| date | ${machine.date} |`,
  `| CPU | ${machine.cpu} |`,
  `| cores | ${machine.cores} |`,
  `| memory | ${num(memoryGiB)} GiB |`,
  `| OS | ${machine.os} |`,
  `| compiler | ${machine.compiler} |`,
  `| build | ${machine.build}, ${machine.build_type}${libraryBuild ? ` (the Debian Google Benchmark library reports itself as a ${libraryBuild} build)` : ""} |`,
  `| load average (1, 5, 15 min) | ${machine.load_start} at the start, ${machine.load_end} at the end; run at nice ${machine.nice} |`,
  "",
  ...sections.flatMap((s) => [s, ""]),
  failures.length ? ["## Not measured", "", ...failures.map((f) => `- ${f}`), ""].join("\n") : "",
  wholePrograms(),
  allRows(),
].join("\n");
// The data folder is this machine's; the page names it as the variable.
const page = machine.data ? out.split(machine.data).join("$OKFBENCH_DATA") : out;
process.stdout.write(page.replace(/\n{3,}/g, "\n\n").trimEnd() + "\n");
