// rtgauge report: draws every chart from the inlined plot model with uPlot (inlined above),
// box plots as SVG. No network access.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('rtgauge-data').textContent);
  var palette = ['#1f5fa8', '#d1495b', '#2a9d8f', '#e9a03b', '#6c4f9c', '#4d7c0f',
                 '#c2185b', '#00838f', '#8d6e63', '#546e7a', '#ef6c00', '#283593'];
  var color = function (i) { return palette[i % palette.length]; };
  var HEIGHT = 300;
  var plots = [];
  var SVGNS = 'http://www.w3.org/2000/svg';

  var superscript = { '-': '⁻', '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴',
                      '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹' };
  function pow10Label(n) {
    return '10' + String(-n).split('').map(function (c) { return superscript[c] || c; }).join('');
  }
  // x = −log10(1 − p): 1 → p90, 2 → p99, 3 → p99.9.
  function percentileName(n) {
    if (n === 0) return 'min';
    var p = 100 - 100 * Math.pow(10, -n);
    var digits = Math.max(0, Math.round(n) - 2);
    return 'p' + p.toFixed(digits);
  }
  function fmt(v) {
    if (v == null) return '–';
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }
  function fmtBytes(b) {
    if (b == null) return '';
    var units = ['B', 'KiB', 'MiB', 'GiB'];
    var i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (Math.round(b * 100) / 100) + units[i];
  }

  function widthOf(el) { return Math.max(260, Math.floor(el.clientWidth || 520)); }

  function lineChart(el, c) {
    var xScale = { time: false };
    var xAxis = { label: c.x_label, stroke: '#1d2329' };
    if (c.x_scale === 'log') { xScale.distr = 3; xScale.log = 10; }
    if (c.x_scale === 'bytes') {
      xScale.distr = 3; xScale.log = 2;
      // Powers of two, thinned to at most eight labels.
      xAxis.splits = function (u, i, min, max) {
        var lo = Math.ceil(Math.log2(Math.max(min, 1))), hi = Math.floor(Math.log2(Math.max(max, 1)));
        var step = Math.max(1, Math.ceil((hi - lo + 1) / 8));
        var out = [];
        for (var k = lo; k <= hi; k += step) out.push(Math.pow(2, k));
        return out;
      };
      xAxis.filter = function (u, splits) { return splits; };
      xAxis.values = function (u, splits) { return splits.map(fmtBytes); };
    }
    if (c.x_scale === 'nines') {
      xAxis.splits = function (u, i, min, max) {
        var out = [];
        for (var v = Math.ceil(min); v <= max + 1e-9; v++) out.push(v);
        return out;
      };
      xAxis.values = function (u, splits) {
        return splits.map(function (v) { return v === 0 ? '1\nmin' : pow10Label(v) + '\n' + percentileName(v); });
      };
      xAxis.size = 52;
    }
    var yScale = {};
    if (c.y_scale === 'log') { yScale.distr = 3; yScale.log = 10; }
    if (c.kind === 'histogram') {
      // Start below a count of one so single outliers do not vanish into the axis.
      yScale.range = function (u, min, max) {
        return [0.5, Math.pow(10, Math.ceil(Math.log10(Math.max(max, 1) * 1.5)))];
      };
    }
    var series = [{
      label: c.x_label,
      value: function (u, v) {
        if (v == null) return '–';
        if (c.x_scale === 'nines') return percentileName(Math.round(v * 100) / 100) + ' (1 − p = ' + Math.pow(10, -v).toPrecision(2) + ')';
        if (c.x_scale === 'bytes') return fmtBytes(v);
        return fmt(v);
      }
    }];
    c.lines.forEach(function (l) {
      var s = {
        label: l.label,
        stroke: color(l.color),
        width: 1.5,
        spanGaps: c.kind !== 'histogram',
        // Histogram bins are dots as well as steps: an isolated outlier bin stays visible.
        // Return-level plots show the observed maxima (the first line) as dots.
        points: { show: c.kind === 'sizes' || c.kind === 'histogram' || (c.kind === 'return_levels' && l.color === 0 && !l.dashed), size: 4 },
        value: function (u, v) { return fmt(v); }
      };
      if (l.dashed) s.dash = [6, 4];
      if (c.step) s.paths = uPlot.paths.stepped({ align: 1 });
      series.push(s);
    });
    var opts = {
      width: widthOf(el),
      height: HEIGHT,
      scales: { x: xScale, y: yScale },
      axes: [xAxis, { label: c.y_label, stroke: '#1d2329', size: 60 }],
      series: series,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } }
    };
    var columns = [c.x].concat(c.lines.map(function (l) { return l.values; }));
    var plot = new uPlot(opts, columns, el);
    plots.push({ el: el, resize: function (w) { plot.setSize({ width: w, height: HEIGHT }); } });
  }

  function niceTicks(lo, hi, count) {
    var span = hi - lo;
    if (!(span > 0)) return [lo];
    var step = Math.pow(10, Math.floor(Math.log10(span / count)));
    var err = span / count / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }

  function node(name, attrs, parent) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function boxChart(el, c) {
    function draw(width) {
      el.textContent = '';
      var n = c.boxes.length;
      var slot = (width - 64 - 12) / Math.max(n, 1);
      var vertical = slot < 64;
      var lines = Math.max.apply(null, c.boxes.map(function (b) { return b.label.split(' · ').length; }));
      var B = vertical ? 150 : 14 * lines + 14;
      var H = HEIGHT + B - 40, L = 64, R = 12, T = 12;
      var svg = node('svg', { viewBox: '0 0 ' + width + ' ' + H, width: width, height: H, role: 'img' }, el);
      node('title', {}, svg).textContent = c.title;
      var lo = Math.min.apply(null, c.boxes.map(function (b) { return b.min; }));
      var hi = Math.max.apply(null, c.boxes.map(function (b) { return b.max; }));
      var log = c.y_scale === 'log';
      var y, ticks;
      if (log) {
        var a = Math.floor(Math.log10(Math.max(lo, 1e-9))), b = Math.ceil(Math.log10(Math.max(hi, 1e-9)));
        if (a === b) b = a + 1;
        ticks = [];
        for (var k = a; k <= b; k++) ticks.push(Math.pow(10, k));
        y = function (v) { return T + (H - T - B) * (1 - (Math.log10(Math.max(v, 1e-9)) - a) / (b - a)); };
      } else {
        var top = hi > lo ? hi + (hi - lo) * 0.05 : hi + 1;
        var bottom = Math.max(0, lo - (hi - lo) * 0.05);
        ticks = niceTicks(bottom, top, 5);
        bottom = Math.min(bottom, ticks[0]);
        y = function (v) { return T + (H - T - B) * (1 - (v - bottom) / (top - bottom)); };
      }
      ticks.forEach(function (t) {
        var ty = y(t);
        node('line', { x1: L, x2: width - R, y1: ty, y2: ty, stroke: '#e3e7ea' }, svg);
        var label = node('text', { x: L - 6, y: ty + 4, 'text-anchor': 'end' }, svg);
        label.textContent = fmt(t);
      });
      var yl = node('text', { transform: 'translate(14,' + ((H - B + T) / 2) + ') rotate(-90)', 'text-anchor': 'middle' }, svg);
      yl.textContent = c.y_label;
      node('line', { x1: L, x2: L, y1: T, y2: H - B, stroke: '#888' }, svg);
      var bw = Math.min(40, slot * 0.6);
      c.boxes.forEach(function (b, i) {
        var cx = L + slot * (i + 0.5);
        var g = node('g', {}, svg);
        node('title', {}, g).textContent = b.label + '\nmin ' + fmt(b.min) + ', p25 ' + fmt(b.p25) + ', median ' + fmt(b.median) +
          ', p75 ' + fmt(b.p75) + ', ' + b.upper_label + ' ' + fmt(b.upper) + ', max ' + fmt(b.max);
        var col = color(b.color);
        if (b.violin && b.violin.length) {
          // The density outline, mirrored around the box's axis and drawn under it.
          var half = Math.min(slot * 0.45, Math.max(bw / 2 + 8, 28));
          var right = b.violin.map(function (pt) { return (cx + half * pt[1]).toFixed(1) + ',' + y(pt[0]).toFixed(1); });
          var left = b.violin.slice().reverse().map(function (pt) { return (cx - half * pt[1]).toFixed(1) + ',' + y(pt[0]).toFixed(1); });
          node('path', { d: 'M' + right.concat(left).join('L') + 'Z', fill: col, 'fill-opacity': 0.12, stroke: col, 'stroke-opacity': 0.5, 'stroke-width': 1 }, g);
        }
        node('line', { x1: cx, x2: cx, y1: y(b.min), y2: y(b.upper), stroke: col }, g);
        node('line', { x1: cx - bw / 4, x2: cx + bw / 4, y1: y(b.min), y2: y(b.min), stroke: col }, g);
        node('line', { x1: cx - bw / 4, x2: cx + bw / 4, y1: y(b.upper), y2: y(b.upper), stroke: col }, g);
        var top = y(b.p75), bottom = y(b.p25);
        node('rect', { x: cx - bw / 2, y: top, width: bw, height: Math.max(1, bottom - top), fill: col, 'fill-opacity': 0.25, stroke: col }, g);
        node('line', { x1: cx - bw / 2, x2: cx + bw / 2, y1: y(b.median), y2: y(b.median), stroke: col, 'stroke-width': 2.5 }, g);
        node('circle', { cx: cx, cy: y(b.max), r: 3.5, fill: col }, g);
        var parts = b.label.split(' · ');
        if (vertical) {
          var t = node('text', { transform: 'translate(' + (cx + 4) + ',' + (H - B + 8) + ') rotate(90)', 'text-anchor': 'start' }, svg);
          t.textContent = b.label.length > 26 ? b.label.slice(0, 25) + '…' : b.label;
        } else {
          var chars = Math.max(4, Math.floor(slot / 6.5));
          parts.forEach(function (part, k) {
            var t = node('text', { x: cx, y: H - B + 16 + 14 * k, 'text-anchor': 'middle' }, svg);
            t.textContent = part.length > chars ? part.slice(0, chars - 1) + '…' : part;
          });
        }
      });
    }
    draw(widthOf(el));
    plots.push({ el: el, resize: draw });
  }

  data.charts.forEach(function (c) {
    var fig = document.querySelector('figure[data-chart="' + c.id + '"]');
    if (!fig) return;
    var el = fig.querySelector('.plot');
    try {
      if (c.kind === 'boxes') boxChart(el, c); else lineChart(el, c);
    } catch (e) {
      // A chart that cannot be drawn says so in place and in the console (the browser test
      // fails on console errors).
      el.textContent = 'This chart could not be drawn: ' + e.message;
      console.error('rtgauge chart ' + c.id + ': ' + e.message);
    }
  });

  var pending = null;
  function resizeAll(fixed) {
    plots.forEach(function (p) { p.resize(fixed || widthOf(p.el)); });
    // Tells a test (or a print script) which window width the charts were last drawn for.
    document.documentElement.setAttribute('data-charts-width', String(fixed || window.innerWidth));
  }
  window.addEventListener('resize', function () {
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () { resizeAll(); }, 150);
  });
  // Printed pages are narrower than most screens: draw at a width that fits A4/Letter.
  window.addEventListener('beforeprint', function () { resizeAll(640); });
  window.addEventListener('afterprint', function () { resizeAll(); });
  document.documentElement.setAttribute('data-charts-width', String(window.innerWidth));
  document.documentElement.setAttribute('data-charts-drawn', String(plots.length));
})();
