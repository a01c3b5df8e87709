// dbprobe report: draws every chart of the page with uPlot from the data
// in #dbprobe-charts, and wires the copy buttons. It loads nothing: the
// page's Content-Security-Policy would refuse it.
(function () {
  "use strict";
  var specs = JSON.parse(document.getElementById("dbprobe-charts").textContent);
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  var bandColour = { warmup: "rgba(120,120,120,0.15)", outage: "rgba(214,39,40,0.18)" };

  // compact says a figure in a few characters: 950, 12.3k, 4.56M.
  function compact(v) {
    if (v == null) return "";
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + "G";
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + "k";
    return String(+v.toPrecision(4));
  }

  // nines turns x = -log10(1 - q) back into the percentile q: 2 -> 99.
  function nines(x) {
    if (x == null) return "";
    var q = 100 * (1 - Math.pow(10, -x));
    return String(+q.toPrecision(Math.max(2, Math.ceil(x) + 2)));
  }

  function options(s, width) {
    var isNines = s.x === "nines";
    var series = [{
      label: isNines ? "percentile" : s.x === "number" ? s.xLabel : "elapsed (s)",
      value: function (u, v) {
        if (isNines) return nines(v);
        if (s.x === "number") return compact(v);
        return v == null ? "" : v.toFixed(1);
      }
    }];
    s.labels.forEach(function (label, k) {
      var st = s.styles[k];
      var onlyPoints = s.points || st.points;
      series.push({
        label: label,
        stroke: palette[k % palette.length],
        width: 1.5,
        dash: st.dashed ? [6, 4] : undefined,
        spanGaps: !!s.spanGaps,
        // Points where there are too few of them for a line to show.
        points: { show: onlyPoints || s.data[0].length < 8, size: 6, fill: palette[k % palette.length] },
        paths: onlyPoints ? function () { return null; } : undefined,
        value: function (u, v) { return compact(v); }
      });
    });
    var xAxis = { label: s.xLabel, stroke: "#333" };
    if (isNines) {
      xAxis.splits = function (u, i, min, max) {
        var out = [];
        for (var n = Math.ceil(min); n <= max; n++) out.push(n);
        return out;
      };
      xAxis.values = function (u, vals) { return vals.map(nines); };
    }
    return {
      width: width,
      height: 280,
      scales: { x: s.logX ? { time: false, distr: 3, log: 2 } : { time: false }, y: s.logY ? { distr: 3 } : {} },
      axes: [xAxis, {
        label: s.yLabel, stroke: "#333", size: 64,
        values: function (u, vals) { return vals.map(compact); }
      }],
      series: series,
      hooks: {
        drawClear: [function (u) {
          s.bands.forEach(function (b) {
            var x0 = u.valToPos(b.from, "x", true), x1 = u.valToPos(b.to, "x", true);
            var left = Math.max(u.bbox.left, Math.min(x0, x1));
            var right = Math.min(u.bbox.left + u.bbox.width, Math.max(x0, x1));
            if (right <= left) right = left + 2; // an outage shorter than a pixel still shows
            u.ctx.fillStyle = bandColour[b.kind] || bandColour.warmup;
            u.ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
          });
        }]
      }
    };
  }

  // Charts are made in slices of about 40 ms, top first, each slice
  // followed by a pause in which the browser paints: the first screen
  // shows at once however many charts a page of many results holds. A
  // chart inside a closed <details> (a run's folded section beside the
  // overlays) is made when it is opened.
  var plots = [];
  var made = {};
  var root = document.documentElement;
  var queue = [];
  var slicing = false;
  function folded(el) { return !!el.closest("details:not([open])"); }
  function make(i) {
    if (made[i]) return;
    made[i] = true;
    var el = document.querySelector('[data-chart="' + i + '"]');
    var width = Math.max(320, el.clientWidth || 900);
    plots.push({ el: el, plot: new uPlot(options(specs[i], width), specs[i].data, el) });
  }
  function slice() {
    var t = performance.now(), first = true;
    while (queue.length && (first || performance.now() - t < 40)) {
      make(queue.shift());
      first = false;
    }
    if (!root.hasAttribute("data-charts-first-ms")) {
      requestAnimationFrame(function () {
        root.setAttribute("data-charts-first-ms", String(Math.round(performance.now())));
      });
    }
    if (queue.length) {
      setTimeout(slice, 0);
      return;
    }
    slicing = false;
    // Read by the browser test and the render benchmark: how many charts
    // are made, and when the frame that shows the last was due, in
    // milliseconds from the start of the page's navigation.
    var n = plots.length;
    requestAnimationFrame(function () {
      root.setAttribute("data-charts-ms", String(Math.round(performance.now())));
      root.setAttribute("data-charts-drawn", String(n));
    });
  }
  function enqueue() {
    specs.forEach(function (s, i) {
      var el = document.querySelector('[data-chart="' + i + '"]');
      if (!made[i] && queue.indexOf(i) < 0 && !folded(el)) queue.push(i);
    });
    if (!slicing) {
      slicing = true;
      slice();
    }
  }
  document.querySelectorAll("details").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) enqueue(); });
  });
  enqueue();
  var resizing = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () {
      plots.forEach(function (p) {
        p.plot.setSize({ width: Math.max(320, p.el.clientWidth), height: 280 });
      });
    }, 100);
  });

  // Copy buttons: the clipboard API where the page may use it, else the
  // selection, which a browser allows from a click on a file:// page.
  document.querySelectorAll("button.copy").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var pre = document.getElementById(btn.getAttribute("data-copy"));
      var text = pre.textContent;
      var done = function () {
        var was = btn.textContent;
        btn.textContent = "Copied";
        setTimeout(function () { btn.textContent = was; }, 1200);
      };
      var select = function () {
        var r = document.createRange();
        r.selectNodeContents(pre);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(r);
        if (document.execCommand("copy")) done();
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, select);
      } else {
        select();
      }
    });
  });
})();
