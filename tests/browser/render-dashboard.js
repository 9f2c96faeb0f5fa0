#!/usr/bin/env node
// Renders the panels of shipped Grafana dashboards from a real Prometheus's answers, in headless
// Debian chromium, and saves a screenshot of each (Grafana itself is not packaged here, so this
// stands in for it: the same queries, laid out on Grafana's 24-column grid).
//  - each panel's queries are sent to Prometheus with Grafana's variables given values
//    ($instance and $cpu: every one; $__range: the time shown; $__interval: one step, at
//    least 5 s; $__rate_interval: four of those);
//  - stat and table panels use an instant query at the end of the range, time series and
//    heatmaps a range query;
//  - a panel whose queries return nothing, or a page with console errors, fails the check.
//
// Usage: node render-dashboard.js OUT_DIR PROMETHEUS_URL SECONDS DASHBOARD.json [DASHBOARD.json …]
// Environment: CHROMIUM (default /usr/bin/chromium).
// Prints one line per panel and the screenshot's path; exit status 0 when every panel has
// data, 1 otherwise.
'use strict';

const fs = require('fs');
const path = require('path');
const { launch } = require('./chromium');


async function prometheus(base, endpoint, params) {
  const url = base + '/api/v1/' + endpoint + '?' + new URLSearchParams(params);
  const answer = await (await fetch(url)).json();
  if (answer.status !== 'success') throw new Error(endpoint + ' ' + params.query + ': ' + JSON.stringify(answer));
  return answer.data.result;
}

// Grafana never makes $__interval shorter than the data source's scrape interval; 5 s holds
// several of the test's 1-s scrapes, so increase() over it has data.
function concrete(expr, rangeS, stepS) {
  const interval = Math.max(stepS, 5);
  return expr
    .replaceAll('$__rate_interval', (4 * interval) + 's')
    .replaceAll('$__interval', interval + 's')
    .replaceAll('$__range', rangeS + 's')
    .replaceAll('$instance', '.*')
    .replaceAll('$cpu', '.*');
}

function legend(format, metric) {
  if (!format) return Object.entries(metric).map(([k, v]) => k + '=' + v).join(' ') || 'value';
  return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, label) => metric[label] ?? '');
}

// Seconds in the unit a latency reader wants.
function seconds(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e-3) return (v * 1e6).toPrecision(3) + ' µs';
  if (a < 1) return (v * 1e3).toPrecision(3) + ' ms';
  return v.toPrecision(3) + ' s';
}

function format(v, unit) {
  if (unit === 's') return seconds(v);
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString('en-US');
  return Number.isInteger(v) ? String(v) : v.toPrecision(3);
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function statPanel(results, unit) {
  return results.map((r) => '<div class="stat"><span class="value">' + esc(format(Number(r.value[1]), unit))
    + '</span><span class="label">' + esc(r.legend) + '</span></div>').join('');
}

function tablePanel(results) {
  const labels = [...new Set(results.flatMap((r) => Object.keys(r.metric)))].filter((l) => l !== '__name__');
  return '<table><tr>' + labels.map((l) => '<th>' + esc(l) + '</th>').join('') + '</tr>'
    + results.map((r) => '<tr>' + labels.map((l) => '<td>' + esc(r.metric[l] ?? '') + '</td>').join('') + '</tr>').join('')
    + '</table>';
}

// Lines over time, one per series; the y axis from 0 to the highest value.
function timeseriesPanel(series, unit, start, end, w, h) {
  const pad = { l: 70, r: 10, t: 10, b: 40 };
  const values = series.flatMap((s) => s.values.map((v) => Number(v[1])).filter(Number.isFinite));
  const top = Math.max(...values, 0) * 1.1 || 1;
  const x = (t) => pad.l + (t - start) / (end - start) * (w - pad.l - pad.r);
  const y = (v) => h - pad.b - v / top * (h - pad.t - pad.b);
  let svg = '<svg width="' + w + '" height="' + h + '">';
  for (let i = 0; i <= 4; i++) {
    const v = top * i / 4;
    svg += '<line x1="' + pad.l + '" x2="' + (w - pad.r) + '" y1="' + y(v) + '" y2="' + y(v) + '" class="grid"/>'
      + '<text x="' + (pad.l - 4) + '" y="' + (y(v) + 4) + '" text-anchor="end">' + esc(format(v, unit)) + '</text>';
  }
  for (let i = 0; i <= 4; i++) {
    const t = start + (end - start) * i / 4;
    const when = new Date(t * 1000).toISOString().slice(11, 19);
    svg += '<text x="' + x(t) + '" y="' + (h - pad.b + 16) + '" text-anchor="middle">' + when + '</text>';
  }
  series.forEach((s, i) => {
    const points = s.values.filter((v) => Number.isFinite(Number(v[1])))
      .map((v) => x(Number(v[0])).toFixed(1) + ',' + y(Number(v[1])).toFixed(1)).join(' ');
    svg += '<polyline fill="none" stroke="' + COLOURS[i % COLOURS.length] + '" stroke-width="1.5" points="' + points + '"/>';
  });
  svg += '</svg>';
  const legends = series.map((s, i) => '<span><i style="background:' + COLOURS[i % COLOURS.length] + '"></i>' + esc(s.legend) + '</span>').join('');
  return svg + '<div class="legend">' + legends + '</div>';
}

// Buckets (by their upper bound `le`) up the y axis, time along x, darker for more samples.
// Prometheus's buckets count cumulatively: a bucket's own samples are its count minus the
// count of the bucket below it.
function heatmapPanel(series, start, end, w, h) {
  const pad = { l: 70, r: 10, t: 10, b: 40 };
  const rows = series.filter((s) => s.metric.le !== '+Inf').sort((a, b) => Number(a.metric.le) - Number(b.metric.le));
  const times = [...new Set(rows.flatMap((s) => s.values.map((v) => Number(v[0]))))].sort((a, b) => a - b);
  const cumulative = rows.map((s) => {
    const at = new Map(s.values.map(([t, v]) => [Number(t), Number(v)]));
    return times.map((t) => at.get(t) || 0);
  });
  const own = cumulative.map((row, i) => row.map((v, j) => Math.max(v - (i > 0 ? cumulative[i - 1][j] : 0), 0)));
  const used = own.map((row, i) => (row.some((v) => v > 0) ? i : -1)).filter((i) => i >= 0);
  if (used.length === 0) return '';
  const lo = used[0];
  const hi = used[used.length - 1];
  const most = Math.max(...own.slice(lo, hi + 1).flat());
  const shown = hi - lo + 1;
  const cw = (w - pad.l - pad.r) / Math.max(times.length, 1);
  const ch = (h - pad.t - pad.b) / shown;
  let svg = '<svg width="' + w + '" height="' + h + '">';
  for (let i = lo; i <= hi; i++) {
    const yTop = h - pad.b - (i - lo + 1) * ch;
    own[i].forEach((v, j) => {
      if (v <= 0) return;
      const shade = Math.sqrt(v / most);
      svg += '<rect x="' + (pad.l + j * cw).toFixed(1) + '" y="' + yTop.toFixed(1)
        + '" width="' + Math.max(cw - 0.5, 0.5).toFixed(1) + '" height="' + Math.max(ch - 0.5, 0.5).toFixed(1)
        + '" fill="rgba(214,39,40,' + (0.3 + 0.7 * shade).toFixed(2) + ')"/>';
    });
    if ((i - lo) % Math.ceil(shown / 8) === 0) {
      svg += '<text x="' + (pad.l - 4) + '" y="' + (yTop + ch / 2 + 4) + '" text-anchor="end">≤ ' + esc(seconds(Number(rows[i].metric.le))) + '</text>';
    }
  }
  for (let i = 0; i <= 4; i++) {
    const t = start + (end - start) * i / 4;
    const when = new Date(t * 1000).toISOString().slice(11, 19);
    svg += '<text x="' + (pad.l + (w - pad.l - pad.r) * i / 4) + '" y="' + (h - pad.b + 16) + '" text-anchor="middle">' + when + '</text>';
  }
  return svg + '</svg>';
}

async function renderDashboard(file, base, rangeS) {
  const dashboard = JSON.parse(fs.readFileSync(file, 'utf8'));
  const end = Math.floor(Date.now() / 1000);
  const start = end - rangeS;
  const step = Math.max(1, Math.round(rangeS / 120));
  const problems = [];
  const cell = 60; // px per grid column (24 columns) and per grid row
  let body = '';
  for (const panel of dashboard.panels) {
    const { x, y, w, h } = panel.gridPos;
    const unit = panel.fieldConfig?.defaults?.unit;
    const width = w * cell - 12;
    const height = h * 36 - 70; // the title above, the legend below
    const results = [];
    for (const target of panel.targets) {
      const query = concrete(target.expr, rangeS, step);
      const ranged = panel.type === 'timeseries' || panel.type === 'heatmap';
      const answer = ranged
        ? await prometheus(base, 'query_range', { query, start, end, step })
        : await prometheus(base, 'query', { query, time: end });
      for (const r of answer) results.push({ ...r, legend: legend(target.legendFormat, r.metric) });
    }
    let content = '';
    if (panel.type === 'stat') content = statPanel(results, unit);
    else if (panel.type === 'table') content = tablePanel(results);
    else if (panel.type === 'timeseries') content = timeseriesPanel(results, unit, start, end, width, height);
    else if (panel.type === 'heatmap') content = heatmapPanel(results, start, end, width, height);
    const drawn = results.length > 0 && content !== '';
    console.log((drawn ? 'drawn ' : 'EMPTY ') + panel.type + ' "' + panel.title + '": ' + results.length + ' series');
    if (!drawn) problems.push('panel "' + panel.title + '" has no data');
    body += '<section class="panel" style="left:' + (x * cell) + 'px;top:' + (y * 36) + 'px;width:' + (w * cell - 8)
      + 'px;height:' + (h * 36 - 8) + 'px"><h2>' + esc(panel.title) + '</h2>' + content + '</section>';
  }
  const bottom = Math.max(...dashboard.panels.map((p) => (p.gridPos.y + p.gridPos.h) * 36));
  const html = '<!doctype html><meta charset="utf-8"><title>' + esc(dashboard.title) + '</title><style>'
    + 'body{margin:0;background:#f4f5f5;font:13px sans-serif;color:#222}'
    + 'header{padding:10px 14px;font-size:17px;background:#fff;border-bottom:1px solid #ddd}'
    + 'header small{color:#666;font-size:12px;margin-left:12px}'
    + '.grid-area{position:relative;margin:8px;height:' + bottom + 'px;width:' + (24 * cell) + 'px}'
    + '.panel{position:absolute;background:#fff;border:1px solid #d8d9da;border-radius:3px;padding:4px 6px;box-sizing:border-box;overflow:hidden}'
    + 'h2{font-size:13px;margin:2px 0 6px;font-weight:600}'
    + '.stat{display:inline-block;margin:4px 14px 4px 0}.stat .value{display:block;font-size:26px;color:#1f77b4}.stat .label{color:#666;font-size:11px}'
    + 'svg text{font-size:10px;fill:#555}.grid{stroke:#e6e6e6}'
    + '.legend span{margin-right:12px;font-size:11px}.legend i{display:inline-block;width:10px;height:3px;margin-right:4px;vertical-align:middle}'
    + 'table{border-collapse:collapse;font-size:11px}td,th{border:1px solid #ddd;padding:2px 5px;text-align:left}'
    + '</style><header>' + esc(dashboard.title) + '<small>rendered from Prometheus ' + esc(base)
    + ', the last ' + rangeS + ' s, every host and CPU (Grafana\'s layout, not Grafana)</small></header><div class="grid-area">' + body + '</div>';
  return { html, problems };
}

async function main() {
  const [outDir, base, rangeArg, ...dashboards] = process.argv.slice(2);
  if (!outDir || !base || !rangeArg || dashboards.length === 0) {
    console.error('usage: node render-dashboard.js OUT_DIR PROMETHEUS_URL SECONDS DASHBOARD.json [DASHBOARD.json …]');
    process.exit(1);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await launch();
  let failed = false;
  try {
    for (const file of dashboards) {
      const { html, problems } = await renderDashboard(file, base, Number(rangeArg));
      const page = await browser.newPage({ viewport: { width: 24 * 60 + 16, height: 900 } });
      page.on('console', (msg) => { if (msg.type() === 'error') problems.push('console error: ' + msg.text()); });
      page.on('pageerror', (err) => problems.push('uncaught exception: ' + err.message));
      await page.setContent(html, { waitUntil: 'load' });
      const screenshot = path.join(outDir, path.basename(file, '.json') + '.png');
      await page.screenshot({ path: screenshot, fullPage: true });
      await page.close();
      console.log(path.basename(file) + ': ' + screenshot);
      for (const p of problems) console.log(path.basename(file) + ': ' + p);
      failed ||= problems.length > 0;
    }
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
