// The perseus dashboard (docs/dashboard.md): polls the server's JSON API and
// draws the jobs, the selected job's frontier with the plans in use, its
// pipelines, their plans and stragglers over time, measured against
// predicted energy, and the carbon decisions.
//
// Every value from the server becomes a text node or an attribute value
// (el(), svg()); nothing is parsed as HTML.
'use strict';

(() => {
  const REFRESH_MS = 2000;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                  '#bcbd22', '#17becf'];
  const MAX_EVENT_ROWS = 20;
  const TOKEN_KEY = 'perseus.token';  // in sessionStorage: this tab only, gone when it closes
  let timer = null, busy = false, again = false;

  // ---- DOM helpers: text and attributes only -------------------------------

  function fill(node, attrs, children) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) node.setAttribute(k, String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  const el = (tag, attrs, ...children) => fill(document.createElement(tag), attrs, children);
  const svg = (tag, attrs, ...children) => fill(document.createElementNS(SVG_NS, tag), attrs, children);

  const color = (i) => COLORS[i % COLORS.length];
  const fmt = (v, digits) => (v === null || v === undefined ? '–' : Number(v).toFixed(digits));
  const fmtJ = (v) => (v === null || v === undefined ? '–' : Number(v).toPrecision(5));
  const isoTime = (unix_s) => new Date(unix_s * 1000).toISOString().replace('T', ' ').slice(0, 19) + 'Z';
  const jobPath = (id) => '/jobs/' + encodeURIComponent(id);

  // ---- the API -------------------------------------------------------------

  // The page's parameters: #job=ID&token=TOKEN.
  const hashParams = () => new URLSearchParams(location.hash.slice(1));

  // A token given in the URL moves to sessionStorage and leaves the URL (and the history).
  function adoptTokenFromUrl() {
    const params = hashParams();
    if (!params.has('token')) return;
    sessionStorage.setItem(TOKEN_KEY, params.get('token'));
    params.delete('token');
    history.replaceState(null, '', location.pathname + (params.toString() ? '#' + params.toString() : ''));
  }

  async function api(path) {
    const headers = {Accept: 'application/json'};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    let res;
    try {
      res = await fetch(path, {cache: 'no-store', headers});
    } catch (e) {
      throw new Error('cannot reach the perseus server (' + e.message + ')');
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) {
      const why = body && body.error ? body.error.message : 'no error message';
      throw Object.assign(new Error('GET ' + path + ': HTTP ' + res.status + ': ' + why), {status: res.status});
    }
    return body;
  }

  const selectedJob = () => hashParams().get('job');

  // ---- charts ----------------------------------------------------------------

  function niceTicks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const ticks = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
    return ticks;
  }

  function padded([lo, hi]) {
    if (hi === lo) return [lo - (Math.abs(lo) * 0.05 || 1), hi + (Math.abs(hi) * 0.05 || 1)];
    const pad = (hi - lo) * 0.06;
    return [lo - pad, hi + pad];
  }

  // An empty chart with axes: {node, x(value), y(value)}.
  function chart(id, title, xLabel, yLabel, xDomain, yDomain, format) {
    const W = 560, H = 300, L = 64, R = 16, T = 28, B = 44;
    const [x0, x1] = padded(xDomain), [y0, y1] = padded(yDomain);
    const x = (v) => L + ((v - x0) / (x1 - x0)) * (W - L - R);
    const y = (v) => H - B - ((v - y0) / (y1 - y0)) * (H - T - B);
    const node = svg('svg', {id, class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img'},
                     svg('title', {}, title), svg('text', {x: L, y: 16}, title));
    const axis = svg('g', {class: 'axis'});
    for (const t of niceTicks(x0, x1, 6)) {
      axis.append(svg('line', {class: 'grid', x1: x(t), x2: x(t), y1: T, y2: H - B}),
                  svg('text', {x: x(t), y: H - B + 14, 'text-anchor': 'middle'}, format.x(t)));
    }
    for (const t of niceTicks(y0, y1, 5)) {
      axis.append(svg('line', {class: 'grid', x1: L, x2: W - R, y1: y(t), y2: y(t)}),
                  svg('text', {x: L - 6, y: y(t) + 4, 'text-anchor': 'end'}, format.y(t)));
    }
    axis.append(svg('path', {d: `M${L},${T}V${H - B}H${W - R}`, fill: 'none'}),
                svg('text', {x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle'}, xLabel),
                svg('text', {x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`,
                             'text-anchor': 'middle'}, yLabel));
    node.append(axis);
    return {node, x, y, width: W};
  }

  const extent = (values) => [Math.min(...values), Math.max(...values)];
  const plain = {x: (t) => String(t), y: (t) => String(t)};

  function legend(count) {
    if (count > 16) return el('p', {class: 'note'}, `${count} pipelines, coloured in turn.`);
    const items = [];
    for (let p = 0; p < count; ++p) {
      items.push(el('span', {}, svg('svg', {class: 'swatch', width: 12, height: 12},
                                        svg('rect', {width: 12, height: 12, fill: color(p)})),
                    `pipeline ${p}`));
    }
    return el('div', {class: 'legend'}, items);
  }

  // ---- sections --------------------------------------------------------------

  function renderJobs(list, selected) {
    const body = document.querySelector('#jobs tbody');
    body.replaceChildren(...list.jobs.map((j) =>
      el('tr', {'data-job': j.id, 'data-phase': j.phase, class: j.id === selected ? 'selected' : null},
         el('td', {}, el('a', {href: '#job=' + encodeURIComponent(j.id)}, j.id)),
         el('td', {}, el('span', {class: 'phase phase-' + j.phase}, j.phase)),
         el('td', {class: 'num'}, `${j.ranks_registered} / ${j.world_size}`),
         el('td', {class: 'num' + (j.warnings.length ? ' warning' : '')}, j.warnings.length))));
    document.getElementById('no-jobs').hidden = list.jobs.length > 0 || list.quarantined.length > 0;
    document.getElementById('quarantined').replaceChildren(...list.quarantined.map((q) =>
      el('p', {class: 'warning', 'data-quarantined': q.id}, `${q.id}: quarantined: ${q.error}`)));
  }

  function facts(pairs) {
    return el('div', {class: 'facts'},
              pairs.filter(([, v]) => v !== null && v !== undefined)
                   .map(([k, v]) => el('div', {}, el('span', {}, k), v)));
  }

  function jobFacts(job) {
    const out = [el('h2', {}, 'Job ', el('span', {id: 'job-id'}, job.id), ' ',
                    el('span', {id: 'job-phase', class: 'phase phase-' + job.phase}, job.phase))];
    const spec = job.spec;
    out.push(facts([
      ['ranks', `${job.ranks_registered} / ${job.world_size}`],
      ['shape', `dp ${spec.dp} × pp ${spec.pp} × tp ${spec.tp}, ${spec.schedule}, ${spec.microbatches} microbatches`],
      ['blocking power', job.blocking_power_w ? fmt(job.blocking_power_w, 1) + ' W' : null],
      ['profiling', job.profiling ? `window ${job.profiling.window} of ${job.profiling.windows}` +
                                    (job.profiling.purpose ? ` (${job.profiling.purpose})` : '') : null],
      ['frontier', job.frontier ? `${job.frontier.plans} plans` : null]]));
    if (job.error) out.push(el('p', {class: 'error', id: 'job-error'}, job.error));
    if (job.warnings.length) {
      out.push(el('h3', {}, 'Warnings'),
               el('ul', {id: 'warnings'}, job.warnings.map((w) =>
                 el('li', {class: 'warning', 'data-code': w.code}, `${w.code}: ${w.message}`))));
    }
    return out;
  }

  // Which pipelines run each plan: plan index -> [pipeline].
  function pipelinesByPlan(pipelines) {
    const by = new Map();
    for (const p of pipelines) by.set(p.plan_index, [...(by.get(p.plan_index) || []), p.pipeline]);
    return by;
  }

  function frontierChart(frontier, pipelines, carbonPlan) {
    const plans = frontier.plans, inUse = pipelinesByPlan(pipelines);
    const times = plans.map((p) => p.time_s).concat(frontier.all_max.time_s);
    const energies = plans.map((p) => p.energy_j).concat(frontier.all_max.energy_j);
    const c = chart('frontier', 'Frontier: energy and time of one iteration per plan', 'iteration time (s)',
                    'energy per pipeline iteration (J)', extent(times), extent(energies),
                    {x: (t) => t.toPrecision(3), y: (t) => t.toPrecision(4)});
    c.node.append(svg('path', {class: 'frontier-line',
                              d: 'M' + plans.map((p) => `${c.x(p.time_s)},${c.y(p.energy_j)}`).join('L')}));
    const m = frontier.all_max;
    c.node.append(svg('rect', {class: 'all-max', x: c.x(m.time_s) - 5, y: c.y(m.energy_j) - 5, width: 10, height: 10},
                      svg('title', {}, `every GPU at its maximum clock: ${fmt(m.time_s, 4)} s, ${fmtJ(m.energy_j)} J`)));
    for (const p of plans) {
      const users = inUse.get(p.index) || [];
      const classes = ['plan', users.length ? 'in-use' : null, p.index === carbonPlan ? 'carbon-plan' : null];
      c.node.append(svg('circle', {class: classes.filter(Boolean).join(' '), 'data-index': p.index,
                                   'data-pipelines': users.length ? users.join(' ') : null,
                                   cx: c.x(p.time_s), cy: c.y(p.energy_j), r: users.length ? 6 : 3},
                        svg('title', {}, `plan ${p.index}: ${fmt(p.time_s, 4)} s, ${fmtJ(p.energy_j)} J` +
                                         (users.length ? `; run by pipeline ${users.join(', ')}` : ''))));
      if (users.length) {
        const right = c.x(p.time_s) > c.width * 0.6;  // label on the side with room
        c.node.append(svg('text', {class: 'in-use-label', x: c.x(p.time_s) + (right ? -9 : 9), y: c.y(p.energy_j) - 8,
                                   'text-anchor': right ? 'end' : 'start'},
                          `plan ${p.index}: pipeline ${summarize(users)}`));
      }
    }
    return c.node;
  }

  // [0,1,2,5] -> "0-2, 5".
  function summarize(numbers) {
    const parts = [];
    for (let i = 0; i < numbers.length; ++i) {
      let j = i;
      while (j + 1 < numbers.length && numbers[j + 1] === numbers[j] + 1) ++j;
      parts.push(i === j ? `${numbers[i]}` : `${numbers[i]}–${numbers[j]}`);
      i = j;
    }
    return parts.join(', ');
  }

  function pipelineTable(job) {
    const slow = new Map(job.stragglers.map((s) => [s.pipeline, s]));
    const rows = job.pipelines.map((p) => {
      const s = slow.get(p.pipeline);
      const ratio = p.measured_energy_j === null ? null : 100 * p.measured_energy_j / p.predicted_energy_j;
      return el('tr', {class: 'pipeline-row' + (s ? ' straggler' : ''), 'data-pipeline': p.pipeline,
                       'data-plan-index': p.plan_index},
                el('td', {class: 'num'}, p.pipeline), el('td', {class: 'num'}, p.plan_index),
                el('td', {class: 'num'}, fmt(p.predicted_time_s, 4)), el('td', {class: 'num'}, fmt(p.measured_time_s, 4)),
                el('td', {class: 'num'}, fmtJ(p.predicted_energy_j)), el('td', {class: 'num'}, fmtJ(p.measured_energy_j)),
                el('td', {class: 'num'}, ratio === null ? '–' : fmt(ratio, 1) + '%'),
                el('td', {class: s ? 'warning' : null}, s ? `×${fmt(s.slowdown, 3)} (${s.source})` : ''));
    });
    const head = ['pipeline', 'plan', 'predicted s', 'measured s', 'predicted J', 'measured J', 'measured/predicted',
                  'straggler'];
    return el('table', {id: 'pipelines'}, el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
              el('tbody', {}, rows));
  }

  // Step lines of each pipeline's plan index over time, with straggler marks.
  function plansOverTime(history) {
    const events = history.events;
    const now = Math.max(Date.now() / 1000, events[events.length - 1].unix_s);
    const t0 = events[0].unix_s;
    const maxPlan = Math.max(0, ...events.flatMap((e) => e.plan_index));
    const c = chart('plans-over-time', 'Plan of each pipeline over time (triangles: stragglers)',
                    `seconds since ${isoTime(t0)}`, 'frontier plan index', [0, now - t0], [0, maxPlan],
                    {x: (t) => String(t), y: (t) => (Number.isInteger(t) ? String(t) : '')});
    for (let p = 0; p < history.pipelines; ++p) {
      let d = '';
      events.forEach((e, i) => {
        if (p >= e.plan_index.length) return;
        const x = c.x(e.unix_s - t0), y = c.y(e.plan_index[p]);
        d += d === '' ? `M${x},${y}` : `H${x}V${y}`;
        const next = i + 1 < events.length ? events[i + 1].unix_s : now;
        d += `H${c.x(next - t0)}`;
      });
      if (d) c.node.append(svg('path', {class: 'pipeline-line', 'data-pipeline': p, d, stroke: color(p)}));
    }
    for (const e of events) {
      for (const s of e.stragglers) {
        const x = c.x(e.unix_s - t0), y = c.y(e.plan_index[s.pipeline] ?? 0);
        c.node.append(svg('path', {class: 'straggler-mark', 'data-pipeline': s.pipeline,
                                   d: `M${x},${y - 9}l5,8h-10z`},
                          svg('title', {}, `pipeline ${s.pipeline} straggles ×${fmt(s.slowdown, 3)} (${s.source})`)));
      }
    }
    return c.node;
  }

  function describePlans(indices) {
    if (indices.length && indices.every((i) => i === indices[0])) return `all pipelines: plan ${indices[0]}`;
    return indices.map((i, p) => `${p}: ${i}`).join(', ');
  }

  function eventTable(events) {
    const rows = events.slice(-MAX_EVENT_ROWS).reverse().map((e) =>
      el('tr', {class: 'event-row'}, el('td', {}, isoTime(e.unix_s)), el('td', {}, e.phase),
         el('td', {class: 'wrap'}, describePlans(e.plan_index)),
         el('td', {class: 'wrap'}, e.stragglers.map((s) => `${s.pipeline} ×${fmt(s.slowdown, 3)} (${s.source})`)
                                              .join(', '))));
    return el('table', {id: 'events'},
              el('thead', {}, el('tr', {}, ['time (UTC)', 'phase', 'plans', 'stragglers'].map((h) => el('th', {}, h)))),
              el('tbody', {}, rows));
  }

  // Measured energy of each pipeline iteration (points) against its plan's prediction (dashed).
  function energyChart(history) {
    const points = history.iterations.filter((p) => p.energy_j !== null);
    if (!points.length) {
      return el('p', {class: 'note', id: 'energy-note'},
                history.iterations.length ? 'The ranks report no energy (no energy counter).'
                                          : 'No iteration reported by every rank of a pipeline yet.');
    }
    const iters = points.map((p) => p.iteration);
    const energies = points.flatMap((p) => [p.energy_j, p.predicted_energy_j]);
    const c = chart('energy-over-iterations', 'Measured (points) and predicted (dashed) energy per iteration',
                    'iteration', 'energy per pipeline iteration (J)', extent(iters), extent(energies),
                    {x: (t) => String(t), y: (t) => t.toPrecision(4)});
    const byPipeline = new Map();
    for (const p of points) byPipeline.set(p.pipeline, [...(byPipeline.get(p.pipeline) || []), p]);
    for (const [pipeline, list] of byPipeline) {
      c.node.append(svg('path', {class: 'predicted', 'data-pipeline': pipeline, stroke: color(pipeline),
                                 d: 'M' + list.map((p) => `${c.x(p.iteration)},${c.y(p.predicted_energy_j)}`).join('L')}));
      for (const p of list) {
        c.node.append(svg('circle', {class: 'measured', 'data-pipeline': pipeline, cx: c.x(p.iteration),
                                     cy: c.y(p.energy_j), r: 2.5, fill: color(pipeline)},
                          svg('title', {}, `pipeline ${pipeline}, iteration ${p.iteration}, plan ${p.plan_index}: ` +
                                           `${fmtJ(p.energy_j)} J measured, ${fmtJ(p.predicted_energy_j)} J predicted`)));
      }
    }
    return c.node;
  }

  function energySummary(history) {
    const points = history.iterations.filter((p) => p.energy_j !== null);
    if (!points.length) return null;
    const measured = points.reduce((a, p) => a + p.energy_j, 0);
    const predicted = points.reduce((a, p) => a + p.predicted_energy_j, 0);
    return el('p', {id: 'energy-summary'},
              `Over the last ${points.length} pipeline iterations: measured ${fmtJ(measured)} J, predicted ` +
              `${fmtJ(predicted)} J (${fmt(100 * measured / predicted, 1)}% of the prediction).`);
  }

  function carbonSection(carbon, events) {
    const out = [el('h3', {}, 'Carbon'),
                 facts([['source', carbon.config.source], ['trace', carbon.config.trace_path], ['zone', carbon.config.zone],
                        ['intensity', carbon.evaluated ? `${fmt(carbon.intensity_g_per_kwh, 1)} gCO2/kWh` +
                                                         (carbon.stale ? ' (stale)' : '') : 'no decision yet'],
                        ['forecast', carbon.evaluated ? `${fmt(carbon.forecast_g_per_kwh, 1)} gCO2/kWh` : null],
                        ['carbon plan', carbon.evaluated ? carbon.plan_index : null],
                        ['slowdown so far', `${fmt(100 * carbon.slowdown_so_far, 2)}% of ` +
                                            `${fmt(100 * carbon.slowdown_budget, 2)}%`],
                        ['next decision', carbon.next_eval_unix_s ? isoTime(carbon.next_eval_unix_s) : null]])];
    const decisions = events.filter((e) => e.carbon).reverse();
    if (!decisions.length) {
      out.push(el('p', {class: 'note'}, 'No carbon decision since the server started.'));
      return out;
    }
    out.push(el('table', {id: 'carbon-decisions'},
                el('thead', {}, el('tr', {}, ['decided (UTC)', 'gCO2/kWh', 'forecast', 'plan', 'explanation']
                                                  .map((h) => el('th', {}, h)))),
                el('tbody', {}, decisions.slice(0, MAX_EVENT_ROWS).map((e) =>
                  el('tr', {class: 'carbon-decision', 'data-plan-index': e.carbon.plan_index},
                     el('td', {}, isoTime(e.carbon.decided_unix_s)),
                     el('td', {class: 'num'}, fmt(e.carbon.intensity_g_per_kwh, 1)),
                     el('td', {class: 'num'}, fmt(e.carbon.forecast_g_per_kwh, 1)),
                     el('td', {class: 'num'}, e.carbon.plan_index),
                     el('td', {class: 'wrap'}, e.carbon.explanation))))));
    return out;
  }

  // The power cap in force (docs/power.md): the cap (and the job's share of the server's), the predicted
  // and measured power, the mix, and clocks held under a ceiling below the frontier's least power.
  function powerSection(cap, pipelines) {
    const watts = (w) => (w === null || w === undefined ? '—' : `${fmt(w / 1000, 1)} kW`);
    const mix = cap.fast_share === null ? 'decided once the job runs'
                                        : `the faster setting ${fmt(100 * cap.fast_share, 0)}% of each ${cap.window_s} s window`;
    const shared = cap.server_share_w === null || cap.server_share_w === undefined ? ''
                   : `, its share of the server's cap ${watts(cap.server_share_w)}`;
    const ceilings = pipelines.map((p) => p.clock_ceiling_mhz).filter((c) => c !== null && c !== undefined);
    const held = ceilings.length ? `; clocks held at most ${Math.max(...ceilings)} MHz (below the frontier's least power)` : '';
    return [el('h3', {}, 'Power cap'),
            el('p', {id: 'power-summary', class: 'note'},
               `Cap ${watts(cap.average_w)} (${cap.source})` + (cap.peak_w ? `, peak ${watts(cap.peak_w)}` : '') + shared +
               `; predicted ${watts(cap.predicted_w)}, measured ${watts(cap.measured_w)}; ${mix}${held}` +
               (cap.feasible === false ? '; not reachable: the least power there is runs.' : '.'))];
  }

  async function renderJob(id) {
    const job = await api(jobPath(id));
    const [frontier, history] = await Promise.all([
      job.frontier ? api(jobPath(id) + '/frontier') : Promise.resolve(null),
      api(jobPath(id) + '/history')]);
    const parts = jobFacts(job);
    const carbonPlan = job.carbon && job.carbon.evaluated ? job.carbon.plan_index : null;
    if (frontier) {
      parts.push(el('h3', {}, 'Frontier and plans in use'),
                 el('div', {class: 'charts'}, frontierChart(frontier, job.pipelines, carbonPlan)),
                 el('p', {class: 'note'}, 'Square: every GPU at its maximum clock. Ringed: the plans the pipelines ' +
                                          'run' + (carbonPlan === null ? '.' : '; green: the carbon policy\'s plan.')));
    }
    if (job.pipelines.length) parts.push(el('h3', {}, 'Pipelines'), pipelineTable(job));
    if (history.events.some((e) => e.plan_index.length)) {
      parts.push(el('h3', {}, 'Plans and stragglers over time'), legend(history.pipelines),
                 el('div', {class: 'charts'}, plansOverTime(history), energyChart(history)),
                 energySummary(history), eventTable(history.events));
    }
    if (job.carbon) parts.push(...carbonSection(job.carbon, history.events));
    if (job.power_cap) parts.push(...powerSection(job.power_cap, job.pipelines));
    const section = document.getElementById('job');
    section.replaceChildren(...parts.filter(Boolean));
    section.hidden = false;
  }

  // The server wants a token for reads (perseus serve --token-for-reads).
  function showAuth(message) {
    const box = document.getElementById('auth');
    box.hidden = message === null;
    document.getElementById('auth-message').textContent = message || '';
    document.getElementById('jobs-section').hidden = message !== null;
    if (message !== null) document.getElementById('job').hidden = true;
  }

  function useToken(event) {
    event.preventDefault();
    const input = document.getElementById('auth-token');
    if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    input.value = '';
    refresh();
  }

  function showError(message) {
    const box = document.getElementById('error');
    box.textContent = message || '';
    box.hidden = !message;
  }

  // One refresh at a time: one asked for meanwhile (a click) runs right after.
  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    clearTimeout(timer);
    await load();
    busy = false;
    if (again) {
      again = false;
      refresh();
    } else {
      timer = setTimeout(refresh, REFRESH_MS);
    }
  }

  async function load() {
    try {
      const list = await api('/jobs');
      const wanted = selectedJob();
      const id = wanted !== null ? wanted : (list.jobs.length ? list.jobs[0].id : null);
      renderJobs(list, id);
      if (id !== null) {
        await renderJob(id);
      } else {
        document.getElementById('job').hidden = true;
      }
      showError(null);
      showAuth(null);
      document.getElementById('status').textContent = 'updated ' + new Date().toLocaleTimeString();
      document.body.dataset.state = 'ready';
    } catch (e) {
      if (e.status === 401) {
        showError(null);
        showAuth((sessionStorage.getItem(TOKEN_KEY) ? 'The server refused the token: ' : 'This server needs its ' +
                  'token to show its jobs (it runs with --token-for-reads): ') + e.message);
        document.body.dataset.state = 'auth';
      } else {
        showError(e.message);
        if (e.status === 404) document.getElementById('job').hidden = true;  // not another job's data
        document.body.dataset.state = 'error';
      }
    }
  }

  window.addEventListener('hashchange', () => {
    adoptTokenFromUrl();
    refresh();
  });
  document.getElementById('auth-form').addEventListener('submit', useToken);
  adoptTokenFromUrl();
  refresh();
})();
