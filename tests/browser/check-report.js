#!/usr/bin/env node
// Loads rtgauge HTML reports in headless Debian chromium and checks that each one
//  - loads with no console errors and no uncaught exceptions,
//  - makes no network request (everything is inlined),
//  - draws every chart (a canvas with painted pixels, or an SVG with shapes),
//  - fits a phone-width viewport without the page scrolling sideways,
//  - prints (a PDF is produced);
// and saves a full-page screenshot, printing its path.
//
// Usage: node check-report.js OUT_DIR REPORT.html [REPORT.html …]
// Environment: CHROMIUM (default /usr/bin/chromium).
// Exit status 0 when every report passes, 1 otherwise (the reasons are printed).
'use strict';

const path = require('path');
const fs = require('fs');
const { launch } = require('./chromium');


async function checkReport(browser, file, outDir) {
  const problems = [];
  const url = 'file://' + path.resolve(file);
  // A new context is a fresh profile: no cache, no cookies, no service workers.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push('console error: ' + msg.text());
  });
  page.on('pageerror', (err) => problems.push('uncaught exception: ' + err.message));
  page.on('request', (req) => {
    const u = req.url();
    if (u !== url && !u.startsWith('data:')) problems.push('network request: ' + u);
  });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.documentElement.hasAttribute('data-charts-drawn'), null, { timeout: 30000 })
    .catch(() => problems.push('the chart script never finished (data-charts-drawn not set)'));

  const charts = await page.evaluate(() => {
    const out = [];
    for (const fig of document.querySelectorAll('figure.chart')) {
      const id = fig.getAttribute('data-chart');
      const svg = fig.querySelector('.plot svg');
      const canvas = fig.querySelector('.plot canvas');
      let drawn = false;
      let how = 'nothing';
      if (svg) {
        const shapes = svg.querySelectorAll('rect, line, circle, path').length;
        drawn = shapes > 3 && svg.getBoundingClientRect().width > 0;
        how = 'svg with ' + shapes + ' shapes';
      } else if (canvas && canvas.width > 0 && canvas.height > 0) {
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let painted = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) painted++;
        drawn = painted > 50;
        how = 'canvas ' + canvas.width + 'x' + canvas.height + ' with ' + painted + ' painted pixels';
      }
      out.push({ id, kind: fig.getAttribute('data-kind'), drawn, how });
    }
    return out;
  });
  if (charts.length === 0) problems.push('the report has no charts');
  for (const c of charts) {
    if (!c.drawn) problems.push('chart ' + c.id + ' (' + c.kind + ') is not drawn: ' + c.how);
  }

  const base = path.join(outDir, path.basename(file, '.html'));
  const screenshot = base + '.png';
  await page.screenshot({ path: screenshot, fullPage: true });

  // Phone width: tables scroll inside their boxes and charts shrink; the page itself must
  // not scroll sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  // The report redraws its charts for the new width after a short debounce; wait for that
  // (a slow machine can take well over the debounce), then for one more frame of layout.
  await page.waitForFunction(() => document.documentElement.getAttribute('data-charts-width') === '390',
    null, { timeout: 15000 })
    .catch(() => problems.push('the charts were not redrawn for phone width within 15 s'));
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const overflow = await page.evaluate(() => {
    const width = window.innerWidth;
    const extra = document.documentElement.scrollWidth - width;
    // Name the outermost elements that stick out, so a failure says what to fix.
    const culprits = [];
    const clipped = (el) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') return true;
      }
      return false;
    };
    for (const el of document.body.querySelectorAll('*')) {
      const right = el.getBoundingClientRect().right;
      const parent = el.parentElement;
      if (right > width + 2 && parent && parent.getBoundingClientRect().right <= width + 2 && !clipped(el)) {
        const cls = el.className && el.className.baseVal === undefined ? '.' + String(el.className).split(' ').join('.') : '';
        culprits.push(el.tagName.toLowerCase() + cls + ' (right edge at ' + Math.round(right) + ' px)');
      }
    }
    // Text overflowing its box (a long path, an unbreakable word) moves no element's edge.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const box = t.parentElement;
      if (!t.data.trim() || !box || clipped(t) || box.getBoundingClientRect().right > width + 2) continue;
      range.selectNodeContents(t);
      const right = range.getBoundingClientRect().right;
      if (right > width + 2) {
        culprits.push('text "' + t.data.trim().slice(0, 40) + '" in ' + box.tagName.toLowerCase()
          + ' (right edge at ' + Math.round(right) + ' px)');
      }
    }
    return { extra, culprits: culprits.slice(0, 5) };
  });
  if (overflow.extra > 2) {
    problems.push('at phone width (390 px) the page is ' + overflow.extra + ' px wider than the screen; sticking out: '
      + (overflow.culprits.join(', ') || 'nothing visible'));
  }
  const phone = base + '-phone.png';
  await page.screenshot({ path: phone, fullPage: false });

  const pdf = base + '.pdf';
  await page.emulateMedia({ media: 'print' });
  await page.pdf({ path: pdf, format: 'A4', printBackground: true });
  if (!(fs.statSync(pdf).size > 1000)) problems.push('the printed PDF is empty');

  await context.close();
  return { file, charts: charts.length, kinds: [...new Set(charts.map((c) => c.kind))], screenshot, phone, pdf, problems };
}

async function main() {
  const [outDir, ...files] = process.argv.slice(2);
  if (!outDir || files.length === 0) {
    console.error('usage: node check-report.js OUT_DIR REPORT.html [REPORT.html …]');
    process.exit(1);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await launch();
  let failed = false;
  try {
    for (const f of files) {
      const r = await checkReport(browser, f, outDir);
      console.log('report: ' + r.file);
      console.log('  charts drawn: ' + r.charts + ' (' + r.kinds.join(', ') + ')');
      console.log('  screenshot: ' + r.screenshot);
      console.log('  phone screenshot: ' + r.phone);
      console.log('  printed: ' + r.pdf);
      for (const p of r.problems) console.log('  PROBLEM: ' + p);
      if (r.problems.length) failed = true;
    }
  } finally {
    await browser.close();
  }
  console.log(failed ? 'FAIL' : 'PASS');
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error('browser check could not run: ' + (e && e.stack || e));
  process.exit(1);
});
