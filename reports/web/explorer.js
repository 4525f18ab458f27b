// The explorer of okfbench's report.html: the trial table (sort, filter,
// search, pages of PAGE rows, so a run of 10,000 trials stays quick) and a
// trial's conversation, decoded from its compressed chunk when it is opened.
// Data (written by reports/explorer.cpp):
//   #okfbench-trials     {configs, chunk_trials, columns, rows}
//   #okfbench-chunk-N    base64 of zlib(JSON array of the details of rows
//                        N*chunk_trials ...), read with DecompressionStream
//   #okfbench-prompts    base64 of zlib({HASH: {system, tools}}): the system
//                        prompts and tool definitions of the transcripts, once each
// Everything from the data reaches the page through textContent, never as markup.
(function () {
  'use strict';
  const PAGE = 100;
  const table = JSON.parse(document.getElementById('okfbench-trials').textContent);
  const col = {};
  table.columns.forEach(function (name, i) { col[name] = i; });
  const rows = table.rows.map(function (v, index) {
    const config = table.configs[v[col.config]];
    const text = [v[col.question], v[col.answer], v[col.error], config.name].join(' ').toLowerCase();
    return {index: index, v: v, config: config, text: text};
  });
  const state = {sort: null, descending: false, page: 0, shown: rows};
  const chunks = new Map();
  let prompts = null;

  function el(tag, props, children) {
    const node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (key) {
      if (key === 'text') node.textContent = props[key];
      else if (key === 'class') node.className = props[key];
      else node.setAttribute(key, props[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function count(n) { return n === null || n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'); }

  // As reports/format.cpp format_dollars: cents above $1, else four significant digits.
  function dollars(x) {
    if (x === null || x === undefined) return 'n/a';
    if (Math.abs(x) >= 1) return '$' + x.toFixed(2);
    if (x === 0) return '$0';
    const places = Math.min(12, 3 - Math.floor(Math.log10(Math.abs(x))));
    return '$' + x.toFixed(places).replace(/0+$/, '').replace(/\.$/, '');
  }

  function ms(x) { return x === null || x === undefined ? 'n/a' : x.toFixed(1) + ' ms'; }

  function value(id) { return document.getElementById(id).value; }

  function fillSelect(id, values) {
    const select = document.getElementById(id);
    values.forEach(function (v) { select.appendChild(el('option', {value: v[0], text: v[1]})); });
  }

  function distinct(pick) {
    const seen = [];
    rows.forEach(function (r) { const v = pick(r); if (seen.indexOf(v) < 0) seen.push(v); });
    return seen;
  }

  function errorKind(r) {
    if (!r.v[col.error]) return 'finished';
    return 'failed';
  }

  function setUpFilters() {
    fillSelect('filter-bundle', distinct(function (r) { return r.v[col.bundle]; }).map(function (b) { return [b, b]; }));
    fillSelect('filter-path', distinct(function (r) { return r.v[col.path]; }).map(function (p) {
      return [p, p === 'context' ? 'one-shot (context)' : p];
    }));
    fillSelect('filter-config', table.configs.map(function (c, i) { return [String(i), c.name]; }));
    fillSelect('filter-grade', distinct(function (r) { return r.v[col.facts] || 'none'; }).map(function (g) { return [g, g]; }));
    fillSelect('filter-error', distinct(errorKind).map(function (e) { return [e, e]; }));
    ['filter-bundle', 'filter-path', 'filter-config', 'filter-grade', 'filter-error'].forEach(function (id) {
      document.getElementById(id).addEventListener('change', function () { state.page = 0; apply(); });
    });
    document.getElementById('trial-search').addEventListener('input', function () { state.page = 0; apply(); });
  }

  function matches(r, f) {
    if (f.bundle && r.v[col.bundle] !== f.bundle) return false;
    if (f.path && r.v[col.path] !== f.path) return false;
    if (f.config && String(r.v[col.config]) !== f.config) return false;
    if (f.grade && (r.v[col.facts] || 'none') !== f.grade) return false;
    if (f.error && errorKind(r) !== f.error) return false;
    return !f.search || r.text.indexOf(f.search) >= 0;
  }

  function sortKey(r, column) {
    if (column === 'config') return r.config.name;
    return r.v[col[column]];
  }

  // Ascending or descending by `column`; unknown values last either way, ties in table order.
  function compare(a, b, column, sign) {
    const x = sortKey(a, column), y = sortKey(b, column);
    if (x === y) return a.index - b.index;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return x < y ? -sign : sign;
  }

  function apply() {
    const f = {bundle: value('filter-bundle'), path: value('filter-path'), config: value('filter-config'),
               grade: value('filter-grade'), error: value('filter-error'), search: value('trial-search').trim().toLowerCase()};
    state.shown = rows.filter(function (r) { return matches(r, f); });
    if (state.sort) {
      const column = state.sort, sign = state.descending ? -1 : 1;
      state.shown.sort(function (a, b) { return compare(a, b, column, sign); });
    }
    render();
  }

  const cells = [
    ['bundle', function (r) { return r.v[col.bundle]; }],
    ['question', function (r) { return r.v[col.question]; }],
    ['config', function (r) { return r.config.name; }, function (r) { return r.config.label; }],
    ['repeat', function (r) { return String(r.v[col.repeat]); }],
    ['turns', function (r) { return String(r.v[col.turns]); }],
    ['input_tokens', function (r) { return count(r.v[col.input_tokens]); }],
    ['output_tokens', function (r) { return count(r.v[col.output_tokens]); }],
    ['cost', function (r) { return dollars(r.v[col.cost]); }],
    ['facts', function (r) { return r.v[col.facts] || '—'; }],
    ['error', function (r) { return r.v[col.error]; }]
  ];

  function render() {
    const body = document.querySelector('#trials tbody');
    const pages = Math.max(1, Math.ceil(state.shown.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const fragment = document.createDocumentFragment();
    state.shown.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (r) {
      const tr = el('tr', {'data-index': String(r.index), tabindex: '0'});
      cells.forEach(function (c) {
        const td = el('td', {text: c[1](r)});
        if (c[2]) td.title = c[2](r);
        tr.appendChild(td);
      });
      fragment.appendChild(tr);
    });
    body.replaceChildren(fragment);
    document.getElementById('trial-count').textContent =
        state.shown.length.toLocaleString('en-US') + ' of ' + rows.length.toLocaleString('en-US') + ' trials';
    document.getElementById('trial-page').textContent = 'page ' + (state.page + 1) + ' of ' + pages;
    document.getElementById('page-previous').disabled = state.page === 0;
    document.getElementById('page-next').disabled = state.page >= pages - 1;
    document.querySelectorAll('#trials th').forEach(function (th) {
      const mark = th.getAttribute('data-column') === state.sort ? (state.descending ? ' ▼' : ' ▲') : '';
      th.textContent = th.getAttribute('data-title') + mark;
    });
  }

  function setUpTable() {
    document.querySelectorAll('#trials th').forEach(function (th) {
      th.addEventListener('click', function () {
        const column = th.getAttribute('data-column');
        state.descending = state.sort === column ? !state.descending : false;
        state.sort = column;
        apply();
      });
    });
    document.getElementById('page-previous').addEventListener('click', function () { state.page -= 1; render(); });
    document.getElementById('page-next').addEventListener('click', function () { state.page += 1; render(); });
    const open = function (event) {
      const tr = event.target.closest('tr[data-index]');
      if (tr) openTrial(Number(tr.getAttribute('data-index')));
    };
    document.querySelector('#trials tbody').addEventListener('click', open);
    document.querySelector('#trials tbody').addEventListener('keydown', function (e) { if (e.key === 'Enter') open(e); });
  }

  // The JSON in element `id`, base64 of zlib-compressed text.
  function decodeElement(id) {
    const binary = atob(document.getElementById(id).textContent.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).text().then(JSON.parse);
  }

  function loadChunk(n) {
    if (!chunks.has(n)) chunks.set(n, decodeElement('okfbench-chunk-' + n));
    return chunks.get(n);
  }

  function loadPrompts() {
    if (!prompts) prompts = decodeElement('okfbench-prompts');
    return prompts;
  }

  function openTrial(index) {
    const n = Math.floor(index / table.chunk_trials);
    Promise.all([loadChunk(n), loadPrompts()]).then(function (loaded) {
      showTrial(rows[index], loaded[0][index - n * table.chunk_trials], loaded[1]);
    }).catch(function (e) { window.okfbenchNote('error', 'trial ' + index + ': ' + (e && e.stack ? e.stack : e)); });
  }

  // One turn's input as a bar of new, re-sent and cached tokens, scaled to the trial's largest turn.
  function turnBar(turn, largest) {
    const bar = el('div', {class: 'bar'});
    if (turn['new'] === null) {
      bar.appendChild(el('span', {class: 'unknown', text: 'split unknown (a count was not reported)'}));
      return bar;
    }
    [['new', turn['new']], ['resent', turn.resent], ['cached', turn.cached_part]].forEach(function (part) {
      if (part[1] <= 0) return;
      const span = el('span', {class: 'part-' + part[0], title: part[0] + ': ' + count(part[1])});
      span.style.width = (100 * part[1] / largest).toFixed(2) + '%';
      bar.appendChild(span);
    });
    return bar;
  }

  function toolCall(call) {
    const head = call.name + '(' + call.arguments + ') → ' + count(call.result_bytes) + ' bytes' +
                 (call.repeated ? ', repeated' : '') + (call.error ? ', error: ' + call.error : '');
    const result = call.result !== undefined ? call.result
                                             : 'The result text is not in the transcript; only its size was recorded.';
    return el('details', {class: 'tool-call'}, [el('summary', {text: head}), el('pre', {class: 'tool-result', text: result})]);
  }

  // Why a trial shows no conversation (details.transcript is "not_kept" or "none").
  function missingTranscript(d) {
    const text = d.transcript === 'not_kept'
        ? 'The transcript of this trial was not kept: the run kept transcripts, but not this one ' +
          '(okfbench run --transcripts errors keeps only the transcripts of failed trials). '
        : 'The transcript of this trial was not kept: this run has no transcripts.jsonl.zst ' +
          '(it was made with okfbench run --transcripts none, or by an okfbench that kept none). ';
    return el('p', {class: 'transcript-missing', text: text + 'Shown: the token counts and tool-call sizes of its record.'});
  }

  function message(m) {
    const role = m.role === 'tool' ? 'tool result' + (m.name ? ' (' + m.name + ')' : '') : m.role;
    return el('div', {class: 'message role-' + m.role}, [el('span', {class: 'role', text: role}), el('pre', {text: m.content})]);
  }

  // The system prompt and tool definitions the trial's requests started with.
  function promptView(hash, all) {
    const p = all[hash];
    if (!p) return el('p', {class: 'note', text: 'Prompt ' + hash + ' is not in the transcripts.'});
    const tools = p.tools.map(function (t) {
      return el('details', {class: 'tool-definition'}, [el('summary', {text: t.name + ': ' + t.description}),
                                                      el('pre', {text: t.parameters})]);
    });
    return el('div', {class: 'prompt'}, [
      el('details', {class: 'system-prompt'}, [el('summary', {text: 'System prompt (' + count(p.system.length) + ' characters)'}),
                                                el('pre', {text: p.system || '(none)'})]),
      el('details', {class: 'tool-definitions'}, [el('summary', {text: 'Tools (' + p.tools.length + ')'})].concat(tools))
    ]);
  }

  function attribution(t) {
    if (!t.attribution.length) return null;
    return el('p', {class: 'attribution', text: 'input by origin: ' + t.attribution.map(function (a) {
      return a.origin + ' ' + count(a.tokens);
    }).join(', ')});
  }

  // What turn `t` sent and got back: the messages its request added, the reply and its tool calls.
  function conversationOf(t) {
    const parts = [];
    if (t.restart) parts.push(el('p', {class: 'note', text: 'This request did not extend the previous one; it sent these messages anew.'}));
    (t.sent || []).forEach(function (m) { parts.push(message(m)); });
    if (t.reply) parts.push(message({role: 'assistant', content: t.reply}));
    return parts.concat(t.tool_calls.map(toolCall));
  }

  function turnView(t, i, largest) {
    const numbers = 'input ' + count(t.input) + ' (new ' + count(t['new']) + ', re-sent ' + count(t.resent) +
                    ', cached ' + count(t.cached) + ') · output ' + count(t.output) +
                    (t.ms !== undefined ? ' · call ' + ms(t.ms) : '') +
                    (t.dropped_tool_calls ? ' · ' + t.dropped_tool_calls + ' tool calls dropped' : '');
    const tokens = el('div', {class: 'turn-tokens'}, [turnBar(t, largest), el('p', {class: 'numbers', text: numbers}), attribution(t)]);
    return el('div', {class: 'turn'}, [el('h4', {text: 'Turn ' + (i + 1)}),
                                       el('div', {class: 'turn-body'}, [el('div', {class: 'turn-messages'}, conversationOf(t)), tokens])]);
  }

  function section(title, children) { return el('section', {}, [el('h3', {text: title})].concat(children)); }

  function definitionRow(name, text) { return el('tr', {}, [el('th', {text: name}), el('td', {text: text})]); }

  function showTrial(r, d, allPrompts) {
    const view = document.getElementById('trial-view');
    const largest = Math.max.apply(null, d.turns.map(function (t) { return t.input || 0; }).concat([1]));
    const turns = d.turns.map(function (t, i) { return turnView(t, i, largest); });
    const grades = el('table', {class: 'grades'}, [el('tr', {}, ['grader', 'status', 'score', 'correct', 'detail'].map(function (h) {
      return el('th', {text: h});
    }))].concat(d.grades.map(function (g) {
      return el('tr', {}, [g.grader, g.status, g.score === null ? 'n/a' : g.score.toFixed(3), g.correct ? 'yes' : 'no', g.detail]
          .map(function (t) { return el('td', {text: t}); }));
    })));
    const facts = el('table', {class: 'facts'}, [
      definitionRow('bundle', r.v[col.bundle] + ' (' + count(r.v[col.concepts]) + ' concepts), ' + r.v[col.question_set]),
      definitionRow('configuration', d.label),
      definitionRow('cost', dollars(d.cost)),
      definitionRow('evidence recall', d.evidence_recall === null ? 'n/a' : d.evidence_recall.toFixed(3)),
      definitionRow('timings', 'total ' + ms(d.timings.total_ms) + ', model ' + ms(d.timings.model_ms) + ', retrieval ' +
                    ms(d.timings.retrieval_ms)),
      definitionRow('trial key', d.trial_key + (d.runs > 1 ? ' (run ' + d.runs + ' times)' : ''))
    ]);
    const parts = [el('h2', {text: r.v[col.question] + ' · ' + r.config.name}), facts];
    if (d.error) parts.push(el('p', {class: 'trial-error', text: 'Failed (' + (d.error_class || 'error') + '): ' + d.error}));
    const head = d.transcript === 'kept' ? d.prompts.map(function (h) { return promptView(h, allPrompts); }) : [missingTranscript(d)];
    const legend = el('p', {class: 'legend'}, [el('span', {class: 'key part-new', text: 'new'}),
                                              el('span', {class: 'key part-resent', text: 're-sent'}),
                                              el('span', {class: 'key part-cached', text: 'cached'})]);
    parts.push(section('Conversation', head.concat([legend], turns.length ? turns : [el('p', {class: 'note', text: 'No model call.'})])));
    if (d.failed_call) parts.push(el('p', {class: 'trial-error', text: 'The last model call failed: ' + d.failed_call}));
    if (d.packed.length) {
      parts.push(section('Context pack (' + count(d.context_tokens) + ' tokens)', [el('ol', {}, d.packed.map(function (p) {
        return el('li', {text: p.id + ' · ' + count(p.tokens) + ' tokens · ' + p.reason});
      }))]));
    }
    parts.push(section('Answer', [el('pre', {class: 'answer', text: d.answer || '(no answer)'}),
                                  el('p', {text: 'cites: ' + (d.citations.length ? d.citations.map((id) => '[' + id + ']').join(' ') : 'nothing')})]));
    parts.push(section('Grades', [d.grades.length ? grades : el('p', {class: 'note', text: 'Not graded.'})]));
    parts.push(el('button', {id: 'trial-close', text: 'Close'}));
    view.replaceChildren.apply(view, parts);
    view.setAttribute('data-trial-key', d.trial_key);
    view.hidden = false;
    document.getElementById('trial-close').addEventListener('click', function () {
      view.hidden = true;
      view.removeAttribute('data-trial-key');
    });
    view.scrollIntoView();
  }

  setUpFilters();
  setUpTable();
  apply();
  window.okfbenchTimings = {ready_ms: performance.now()};
  document.body.setAttribute('data-explorer-ready', String(rows.length));
})();
