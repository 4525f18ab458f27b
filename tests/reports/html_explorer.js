// Drives report.html's explorer in Debian's Chromium with playwright-core
// (from reports/web's lock file; NODE_PATH names its node_modules):
//   node html_explorer.js check REPORT OUT_DIR   open, filter, search, open a trial and read its
//                                                conversation, open one without a transcript, sort;
//                                                prints what it saw as JSON, screenshots in OUT_DIR
//   node html_explorer.js measure REPORT         times opening the page and filtering, as JSON
// Every step waits for an element or attribute the page sets, never for a time.
'use strict';
const { chromium } = require('playwright-core');

const [mode, report, outDir] = process.argv.slice(2);
if (!['check', 'measure'].includes(mode) || !report || (mode === 'check' && !outDir)) {
  console.error('usage: node html_explorer.js check REPORT OUT_DIR | measure REPORT');
  process.exit(2);
}

async function open(browser) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.setDefaultTimeout(120000);
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto('file://' + report);
  await page.waitForSelector('body[data-explorer-ready]');
  return { page, problems };
}

const count = (page) => page.textContent('#trial-count');
const firstCells = (page) => page.$$eval('#trials tbody tr', (trs) => trs.map((tr) => Array.from(tr.cells, (td) => td.textContent)));

async function check(browser) {
  const { page, problems } = await open(browser);
  await page.waitForSelector('body[data-charts-rendered]');
  const seen = { answer: await page.textContent('#answer'), opened: await count(page) };
  seen.headline_path_title = await page.getAttribute('#headline tbody tr:nth-child(1) td[title]', 'title');
  // The first screen: the verdict, then the cost-against-quality chart, all before the explorer; no sideways scroll.
  seen.first_screen = await page.evaluate(() => {
    const verdict = document.getElementById('verdict');
    const chart = document.querySelector('#first-chart .chart');
    const trials = document.getElementById('trials');
    const marks = chart ? Array.from(chart.querySelectorAll('.mark-symbol path')) : [];
    return {
      scroll_width: document.documentElement.scrollWidth,
      verdict: verdict ? verdict.textContent : null,
      verdict_before_chart: !!(verdict && chart && (verdict.compareDocumentPosition(chart) & Node.DOCUMENT_POSITION_FOLLOWING)),
      chart_before_explorer: !!(chart && trials && (chart.compareDocumentPosition(trials) & Node.DOCUMENT_POSITION_FOLLOWING)),
      verdict_top: verdict ? verdict.getBoundingClientRect().top : null,
      explorer_top: trials ? trials.getBoundingClientRect().top : null,
      chart_id: chart ? chart.id : null,
      marker_fills: Array.from(new Set(marks.map((m) => m.getAttribute('fill')))).length,
      marker_shapes: Array.from(new Set(marks.map((m) => m.getAttribute('d')))).length,
      legend: chart ? Array.from(chart.querySelectorAll('.role-legend-label text'), (t) => t.textContent) : [],
    };
  });
  await page.screenshot({ path: `${outDir}/first-screen.png` });
  await page.screenshot({ path: `${outDir}/explorer-open.png` });

  await page.selectOption('#filter-path', 'agent');
  seen.agent_only = await count(page);
  await page.selectOption('#filter-bundle', 'gen-100');
  seen.agent_gen100 = await count(page);
  await page.fill('#trial-search', 'q2');
  seen.searched = await count(page);
  seen.searched_rows = await firstCells(page);

  await page.click('#trials tbody tr:first-child');
  await page.waitForSelector('#trial-view[data-trial-key]');
  seen.trial_key = await page.getAttribute('#trial-view', 'data-trial-key');
  seen.turn_headings = await page.$$eval('#trial-view .turn h4', (hs) => hs.map((h) => h.textContent));
  seen.bar_parts = await page.$$eval('#trial-view .turn', (ts) => Array.from(ts[2].querySelectorAll('.bar span'), (s) => s.className));
  seen.system_prompt = await page.textContent('#trial-view .system-prompt pre');
  seen.tools_summary = await page.textContent('#trial-view .tool-definitions > summary');
  seen.messages = await page.$$eval('#trial-view .turn', (ts) => ts.map((t) => Array.from(t.querySelectorAll('.message'),
    (m) => [m.querySelector('.role').textContent, m.querySelector('pre').textContent]).flat()));
  seen.results = await page.$$eval('#trial-view .tool-result', (ps) => ps.map((p) => p.textContent));
  seen.attribution = await page.textContent('#trial-view .turn .attribution');
  seen.numbers = await page.textContent('#trial-view .turn .numbers');
  seen.missing_kept = await page.$$eval('#trial-view .transcript-missing', (ps) => ps.length);
  await page.click('#trial-view .tool-call summary');
  seen.tool_call_open = await page.$eval('#trial-view .tool-call', (d) => d.open);
  seen.tool_call = await page.textContent('#trial-view .tool-call');
  seen.answer_text = await page.textContent('#trial-view .answer');
  seen.grades = await page.$$eval('#trial-view .grades tr', (trs) => trs.slice(1).map((tr) => tr.cells[0].textContent + ' ' + tr.cells[3].textContent));
  await page.screenshot({ path: `${outDir}/explorer-trial.png`, fullPage: true });

  await page.fill('#trial-search', 'q1');
  await page.click('#trials tbody tr:first-child');
  await page.waitForSelector('#trial-view[data-trial-key="a-q1"]');
  seen.other_key = await page.getAttribute('#trial-view', 'data-trial-key');
  seen.other_missing = await page.textContent('#trial-view .transcript-missing');
  seen.other_turns = await page.$$eval('#trial-view .turn', (ts) => ts.length);
  seen.other_result = await page.textContent('#trial-view .tool-result');

  await page.fill('#trial-search', '');
  await page.selectOption('#filter-bundle', '');
  await page.selectOption('#filter-path', '');
  await page.selectOption('#filter-error', 'failed');
  seen.failed_rows = await firstCells(page);
  await page.selectOption('#filter-error', '');
  await page.click('#trials th[data-column="input_tokens"]');
  await page.click('#trials th[data-column="input_tokens"]');
  seen.sorted_descending = (await firstCells(page)).slice(0, 3);
  seen.errors_shown = await page.textContent('#okfbench-errors');
  seen.warnings_shown = await page.textContent('#okfbench-warnings');
  seen.console_problems = problems;
  return seen;
}

// Milliseconds from navigation start to the filled table, then for filters
// and a search over every trial, measured inside the page.
async function measure(browser) {
  const { page, problems } = await open(browser);
  const measured = await page.evaluate(() => {
    const time = (fn) => { const t0 = performance.now(); fn(); return performance.now() - t0; };
    const select = (id, value) => {
      const el = document.getElementById(id);
      el.value = value;
      el.dispatchEvent(new Event('change'));
    };
    const search = (text) => {
      const el = document.getElementById('trial-search');
      el.value = text;
      el.dispatchEvent(new Event('input'));
    };
    const path = document.getElementById('filter-path').options[1].value;
    return {
      trials: Number(document.body.getAttribute('data-explorer-ready')),
      ready_ms: window.okfbenchTimings.ready_ms,
      filter_path_ms: time(() => select('filter-path', path)),
      search_ms: time(() => search('q1')),
      clear_ms: time(() => { search(''); select('filter-path', ''); }),
      sort_ms: time(() => document.querySelector('#trials th[data-column="input_tokens"]').click()),
    };
  });
  const t0 = Date.now();
  await page.click('#trials tbody tr:last-child');
  await page.waitForSelector('#trial-view[data-trial-key]');
  measured.open_trial_ms = Date.now() - t0;
  measured.console_problems = problems;
  return measured;
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.OKFBENCH_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    console.log(JSON.stringify(mode === 'check' ? await check(browser) : await measure(browser)));
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
