// scripts/bench/results.mjs on hand-made raw results: a ratio is worked out
// from the two rows it names and phrased by which side won, a figure whose
// rows are missing is listed as not measured (never guessed), an error row
// is reported with its message, and the data folder is named as the variable.
//   node --test tests/bench/results_page.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

const script = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "..", "scripts", "bench", "results.mjs");

function row(name, cpuNs, extra = {}) {
  return { name, run_name: name, run_type: "iteration", iterations: 10, real_time: cpuNs * 3, cpu_time: cpuNs, time_unit: "ns", ...extra };
}

function page(files) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "okfbench-results-"));
  try {
    fs.writeFileSync(path.join(work, "machine.txt"), [
      "date=2026-12-02 04:00 UTC", "cpu=Test CPU", "cores=2", "memory_kib=2097152", "os=Debian", "compiler=g++ 12",
      "build=okfbench 0.1.0 (commit abc)", "build_type=Release", "nice=10", "load_start=1.00 2.00 3.00",
      "command=scripts/bench.sh --quick", "data=/data/root", "load_end=4.00 5.00 6.00", "seconds=7", ""].join("\n"));
    for (const [name, content] of Object.entries(files))
      fs.writeFileSync(path.join(work, name), typeof content === "string" ? content : JSON.stringify(content));
    return execFileSync(process.execPath, [script, work], { encoding: "utf8" });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

test("ratios come from the rows they name, phrased by the side that won", () => {
  const out = page({
    "bench_agents.json": { context: { library_build_type: "release" }, benchmarks: [
      row("BM_SimCallIncremental/4", 1000, { label: "10 messages" }), row("BM_SimCountFresh/4", 10000),
      row("BM_SimCallIncremental/16", 4000, { label: "34 messages" }), row("BM_SimCountFresh/16", 2000),
    ] },
  });
  assert.match(out, /\| date \| 2026-12-02 04:00 UTC \|/);
  assert.match(out, /\| memory \| 2 GiB \|/);
  assert.match(out, /1\.00 2\.00 3\.00 at the start, 4\.00 5\.00 6\.00 at the end; run at nice 10/);
  assert.match(out, /conversation of 4 tool results.*\| 1 µs \(10 messages\) \| 10 µs \| \*\*10×\*\* less CPU \|/);
  assert.match(out, /conversation of 16 tool results.*\| 4 µs \(34 messages\) \| 2 µs \| \*\*2×\*\* more CPU \|/);
});

test("missing rows are not measured, error rows keep their message, the data folder is the variable", () => {
  const out = page({
    "bench_tokens.json": { context: {}, benchmarks: [
      { ...row("BM_Count/o200k_base", 1), error_occurred: true, error_message: "SciFact corpus not found: set OKFBENCH_DATA" },
    ] },
    "bench-load.txt": "folder: /data/root/markdown/tldr-pages-en/pages (10 markdown files, 10 concepts loaded)\n" +
      "okfbench validate --profile repo   0.100 s      100 pages/s (whole program)\n" +
      "node: walk + readFileSync only      0.400 s      25 files/s\nratio node / okfbench              4.00x\n",
  });
  assert.match(out, /conversation of 64 tool results.*\| not measured \(missing: bench_agents BM_SimCallIncremental\/64\) \|/);
  assert.match(out, /- bench_tokens BM_Count\/o200k_base: SciFact corpus not found: set OKFBENCH_DATA/);
  assert.match(out, /- bench_search: did not run or wrote no results/);
  assert.match(out, /\| 0\.1 s \| 0\.4 s \| \*\*4×\*\* faster \|/);
  assert.match(out, /folder: \$OKFBENCH_DATA\/markdown\/tldr-pages-en\/pages/);
  assert.doesNotMatch(out, /\/data\/root/);
});
