// The player of a trace document (model/decoding/document.py): steps through one decoding in
// the browser, with no server. ``mountTracePlayer`` builds it inside a root element that holds
// the player's markup (ui/player/player.html): the take-home page mounts it on its <main>, the
// app's in-browser stepping (ui/player/in_browser.py) inside its component. It draws with the given
// plotly.js and never puts the document's text into HTML (textContent, and escaped tick
// labels: Plotly reads <b>, <br> in labels as markup).
// Shape letters: S source tokens, T steps, L layers, H heads, K top-k.

// root: the element holding the markup; doc: the trace document; S: the page's strings;
// options: {Plotly, step (1-based, where to start), kept ({view, layer, head, speed} of an
// earlier mount), present (Present mode: the map first, its labels as large as the app's
// charts and turned upright, never left out: the map scrolls if its column is too narrow),
// marker (the element whose data-step says the step drawn;
// default root),
// keysCapture (take the keys before the page's own listeners), onStep(k) (after every step
// drawn)}. Returns {state, go, play, stop, destroy}.
function mountTracePlayer(root, doc, S, options) {
  "use strict";
  options = options || {};
  const Plotly = options.Plotly || window.Plotly;
  const T = doc.steps.length;
  const SPEEDS = [1, 2, 5, 10]; // steps a second
  const KINDS = ["cross", "encoder", "decoder"];
  const $ = (id) => root.querySelector("#" + id);
  const marker = options.marker || root;

  function fmt(template, values) {
    return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
  }
  function esc(text) { // for Plotly's tick and hover text: its pseudo-HTML must stay text
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function unpack(node) { // {shape, decimals, data} -> {shape, w: Float64Array}
    const scale = Math.pow(10, node.decimals);
    const w = new Float64Array(node.data.length);
    for (let i = 0; i < w.length; i++) w[i] = node.data[i] / scale;
    return { shape: node.shape, w: w };
  }
  // A decoder-only document holds one (L, H, N, N) map over its one sequence, N = S + T:
  // cut it where the prompt ends into the three maps the views draw (as the app does,
  // model.decoding.split_at_prompt): the prompt's rows over the prompt ("encoder"), the
  // decoder inputs' rows over the prompt ("cross") and over themselves ("decoder").
  function block(a, rows, cols) { // a's rows [r0, r1) and columns [c0, c1)
    const L = a.shape[0], H = a.shape[1], N = a.shape[3];
    const R = rows[1] - rows[0], C = cols[1] - cols[0], w = new Float64Array(L * H * R * C);
    for (let lh = 0; lh < L * H; lh++) {
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          w[(lh * R + i) * C + j] = a.w[(lh * N + rows[0] + i) * N + cols[0] + j];
        }
      }
    }
    return { shape: [L, H, R, C], w: w };
  }
  const att = {};
  if (doc.architecture === "decoder-only") {
    const one = unpack(doc.attention.decoder), S = doc.src_labels.length, N = one.shape[3];
    att.encoder = block(one, [0, S], [0, S]);
    att.cross = block(one, [S, N], [0, S]);
    att.decoder = block(one, [S, N], [S, N]);
  } else {
    KINDS.forEach((k) => { att[k] = unpack(doc.attention[k]); });
  }

  // One head's (rows x cols) map of kind `kind`, or the mean over heads (head < 0).
  function headMap(kind, layer, head, rows) {
    const a = att[kind], H = a.shape[1], R = a.shape[2], C = a.shape[3];
    const out = [];
    for (let i = 0; i < rows; i++) {
      const row = new Array(C).fill(0);
      const heads = head < 0 ? [...Array(H).keys()] : [head];
      heads.forEach((h) => {
        const base = ((layer * H + h) * R + i) * C;
        for (let j = 0; j < C; j++) row[j] += a.w[base + j] / heads.length;
      });
      out.push(row);
    }
    return out;
  }

  // Pinyin under whichever side is Chinese: tgt_pinyin (en -> zh), src_pinyin (zh -> en);
  // null, or absent in a document written before src_pinyin, when that side has none.
  const pinyin = doc.tgt_pinyin;
  const srcPinyin = doc.src_pinyin || null;
  function tgtLabel(i, withPinyin) {
    const label = doc.tgt_labels[i];
    return withPinyin && pinyin && pinyin[i] ? label + "\n" + pinyin[i] : label;
  }
  function srcLabel(j, withPinyin) {
    const label = doc.src_labels[j];
    return withPinyin && srcPinyin && srcPinyin[j] ? label + "\n" + srcPinyin[j] : label;
  }
  const srcCols = doc.src_labels.map((_, j) => srcLabel(j, true)); // an x axis: pinyin under
  function tick(text) { return esc(text).replace(/\n/g, "<br>"); }

  const state = { k: Math.min(T, Math.max(1, options.step || 1)), view: "cross", layer: 0,
                  head: -1, timer: null, speed: 2 };
  if (window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches) {
    state.speed = SPEEDS[0];
  }
  const kept = options.kept || {}; // the pickers' choices of an earlier mount, where they fit
  if (KINDS.includes(kept.view)) state.view = kept.view;
  if (SPEEDS.includes(kept.speed)) state.speed = kept.speed;

  // --- static text -------------------------------------------------------------------
  root.querySelectorAll("[data-s]").forEach((el) => { el.textContent = S[el.dataset.s]; });
  drawSource();
  $("made").textContent = fmt(S.home_made, { model: doc.model || "?" });
  const legend = $("legend");
  S.legend.forEach((item) => { // every view in both languages
    const dt = document.createElement("dt");
    dt.textContent = item.title;
    legend.append(dt);
    item.texts.forEach((text) => {
      const dd = document.createElement("dd");
      dd.textContent = text;
      legend.append(dd);
    });
  });
  function option(select, value, text) {
    const o = document.createElement("option");
    o.value = String(value);
    o.textContent = text;
    select.append(o);
  }
  KINDS.forEach((k) => option($("view"), k, S["view_" + k]));
  const L = att.cross.shape[0], H = att.cross.shape[1];
  // Numbers, colours and formats as the app's views draw them (viz/convention.py), from the
  // document: the player keeps no copy of its own.
  const SHOWN = doc.display;
  $("layer").title = S.home_numbering;
  $("head").title = S.home_numbering;
  for (let l = 0; l < L; l++) {
    option($("layer"), l, fmt(S.layer_option, { layer: l + SHOWN.first_number }));
  }
  option($("head"), -1, S.home_mean);
  for (let h = 0; h < H; h++) option($("head"), h, fmt(S.head_option, { head: h + SHOWN.first_number }));
  SPEEDS.forEach((v) => option($("speed"), v, fmt(S.home_speed_n, { n: v })));
  if (kept.layer >= 0 && kept.layer < L) state.layer = kept.layer;
  if (kept.head >= -1 && kept.head < H) state.head = kept.head;
  $("speed").value = String(state.speed);
  $("view").value = state.view;
  $("layer").value = String(state.layer);
  $("head").value = String(state.head);
  $("slider").max = String(T);

  // --- drawing -------------------------------------------------------------------------
  const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["toImage"] };
  const FONT = { family: "Noto Sans CJK SC, Noto Sans, sans-serif", size: 14, color: "#111" };

  // The sentence line: as text, or, with src_pinyin, its tokens with their pinyin over
  // them as the translation's are (<ruby>), around the template's {sentence}.
  function drawSource() {
    const line = $("source");
    if (!srcPinyin) {
      line.textContent = fmt(S.home_source, { sentence: doc.src_text });
      return;
    }
    const parts = S.home_source.split("{sentence}");
    line.classList.add("spoken");
    line.replaceChildren(parts[0]);
    doc.src_labels.forEach((label, j) => {
      if (doc.src_tokens[j] === "</s>") return;
      const ruby = document.createElement("ruby");
      ruby.textContent = label;
      if (srcPinyin[j]) {
        const rt = document.createElement("rt");
        rt.textContent = srcPinyin[j];
        ruby.append(rt);
      }
      line.append(ruby);
    });
    line.append(parts.slice(1).join("{sentence}"));
  }

  function drawTranslation() {
    const line = $("translation");
    line.replaceChildren();
    for (let i = 1; i <= T; i++) {
      if (doc.tgt_tokens[i] === "</s>") continue;
      const ruby = document.createElement("ruby");
      ruby.textContent = doc.tgt_labels[i];
      if (pinyin && pinyin[i]) {
        const rt = document.createElement("rt");
        rt.textContent = pinyin[i];
        ruby.append(rt);
      }
      ruby.className = i === state.k ? "current" : i > state.k ? "future" : "";
      line.append(ruby);
    }
  }

  function drawStep() {
    const st = doc.steps[state.k - 1];
    $("chosen").textContent = fmt(S.home_chosen, {
      token: st.label, prob: (100 * st.prob).toFixed(1), entropy: st.entropy.toFixed(2),
      k: state.k, input: doc.tgt_labels.slice(0, state.k).join(" ") });
    // The top-k as the page's own bars (a Plotly chart redrew its tick labels at each step):
    // a row per candidate, its bar as wide as its probability, the chosen one marked.
    const box = $("topk");
    if (!box.__rows) {
      const title = document.createElement("p");
      title.className = "topk-title";
      title.textContent = S.home_topk;
      box.append(title);
      box.__rows = [];
    }
    while (box.__rows.length < st.top_probs.length) {
      const row = document.createElement("div"), label = document.createElement("span");
      const track = document.createElement("span"), bar = document.createElement("span");
      const value = document.createElement("span");
      row.className = "topk-row";
      label.className = "topk-label";
      track.className = "topk-track";
      bar.className = "topk-bar";
      value.className = "topk-value";
      track.append(bar);
      row.append(label, track, value);
      box.append(row);
      box.__rows.push({ row: row, label: label, bar: bar, value: value });
    }
    box.__rows.forEach((r, i) => {
      r.row.hidden = i >= st.top_probs.length;
      if (r.row.hidden) return;
      const p = st.top_probs[i];
      r.label.textContent = st.top_labels[i];
      r.bar.style.width = (100 * p).toFixed(2) + "%";
      r.value.textContent = (100 * p).toFixed(1) + " %";
      r.row.dataset.prob = String(p);
      r.row.classList.toggle("chosen", st.top_labels[i] === st.label);
    });
  }

  // The map keeps one size per view (every row and column of the whole decoding), so that a
  // step changes only its numbers: Plotly then redraws the cells alone (~10 ms at 40 tokens),
  // where new tick labels cost it ~0.5 ms each. The labels are the page's own elements
  // (#map-labels), placed over Plotly's margins, shown up to the step.
  // Columns fit the map's column of the page (up to colPx each, at least minColPx: below
  // that it scrolls); the width is kept until the page's column changes size.
  // The left margin holds the longest row label (at most maxL; longer ones are cut with "…").
  // The right margin holds the colour bar (Plotly may not widen it: labels and cells agree).
  const present = !!options.present;
  const fontPx = present ? SHOWN.present_font_px : 14;
  const MAP = { rowPx: 34, colPx: 52, maxL: present ? 260 : 170, r: 80, t: 20,
                // a turned label's column needs one line of its type (viz.fit's rule)
                minColPx: present ? Math.ceil(SHOWN.line_em * fontPx) : 20,
                font: fontPx + 'px "Noto Sans CJK SC", "Noto Sans", sans-serif' };
  root.classList.toggle("present", present);
  $("map-labels").style.fontSize = fontPx + "px";
  let measure = null;
  function leftMargin(rows) {
    measure = measure || document.createElement("canvas").getContext("2d");
    measure.font = MAP.font;
    const longest = Math.max(0, ...rows.map((text) => measure.measureText(text).width));
    return Math.min(MAP.maxL, Math.ceil(longest) + 16);
  }
  function mapWidth(C, l) {
    const room = $("map").parentElement.clientWidth - l - MAP.r;
    const colPx = Math.max(MAP.minColPx, Math.min(MAP.colPx, Math.floor(room / C)));
    return Math.max(420, l + MAP.r + colPx * C);
  }
  function bottomMargin(cols) { // room under the map for its key labels, turned
    measure = measure || document.createElement("canvas").getContext("2d");
    measure.font = MAP.font;
    const longest = Math.max(0, ...cols.map((text) => Math.max(
      ...String(text).split("\n").map((line) => measure.measureText(line).width))));
    const turned = present ? 1 : Math.sin(Math.PI / 3); // upright, or at 60 degrees
    return Math.min(260, Math.max(60, Math.ceil(turned * longest) + 24));
  }
  function mapShape(kind) { // every row and column label of the view, in drawing order
    if (kind === "encoder") return { rows: doc.src_labels, cols: srcCols };
    const rows = [...Array(T).keys()].map((i) => tgtLabel(i, false) + " → " + tgtLabel(i + 1, false));
    const cols = kind === "decoder" ? [...Array(T).keys()].map((i) => tgtLabel(i, true))
      : srcCols;
    return { rows: rows, cols: cols };
  }

  function drawLabels(kind, shape, width, height, l, b, shownRows, shownCols) {
    const layer = $("map-labels");
    if (layer.__kind !== kind || layer.__width !== width) { // a new view or size: placed once
      layer.replaceChildren();
      const R = shape.rows.length, C = shape.cols.length;
      const cellH = (height - MAP.t - b) / R, cellW = (width - l - MAP.r) / C;
      layer.__rows = shape.rows.map((text, i) => {
        const el = document.createElement("div");
        el.className = "map-y";
        el.textContent = text;
        el.style.top = (MAP.t + (i + 0.5) * cellH) + "px";
        el.style.width = (l - 8) + "px";
        layer.append(el);
        return el;
      });
      layer.__cols = shape.cols.map((text, j) => {
        const el = document.createElement("div");
        el.className = present ? "map-x upright" : "map-x";
        el.textContent = present ? String(text).replace(/\n/g, " ") : text; // one line, turned
        el.style.left = (l + (j + 0.5) * cellW) + "px";
        el.style.top = (height - b + 6) + "px";
        layer.append(el);
        return el;
      });
      layer.__kind = kind;
      layer.__width = width;
    }
    layer.__rows.forEach((el, i) => { el.hidden = i >= shownRows; });
    layer.__cols.forEach((el, j) => { el.hidden = j >= shownCols; });
  }

  function drawMap() {
    const kind = state.view, k = state.k;
    const shape = mapShape(kind);
    const R = shape.rows.length, C = shape.cols.length;
    const shownRows = kind === "encoder" ? R : k, shownCols = kind === "decoder" ? k : C;
    const full = headMap(kind, state.layer, state.head, Math.min(shownRows, R));
    const z = [];
    for (let i = 0; i < R; i++) { // rows past the step, columns past it, the look-ahead mask: blank
      const row = new Array(C).fill(null);
      if (i < shownRows) {
        for (let j = 0; j < shownCols; j++) {
          if (!(kind === "decoder" && j > i)) row[j] = full[i][j];
        }
      }
      z.push(row);
    }
    $("explain").textContent = S["explain_" + kind];
    const l = leftMargin(shape.rows), width = mapWidth(C, l), b = bottomMargin(shape.cols);
    const height = Math.max(260, 40 + b + MAP.rowPx * R);
    const el = $("heatmap");
    if (el.__kind !== kind) { // hover texts: once per view
      el.__custom = shape.rows.map((r) => shape.cols.map((c) => [tick(r), tick(c)]));
      el.__kind = kind;
    }
    Plotly.react(el, [{
      type: "heatmap", z: z, x: [...Array(C).keys()], y: [...Array(R).keys()],
      zmin: SHOWN.zmin, zmax: SHOWN.zmax, colorscale: SHOWN.colorscale,
      hoverongaps: false, // no gaps: they triple the cost
      customdata: el.__custom,
      hovertemplate: "%{customdata[0]} → %{customdata[1]}: %{z:" + SHOWN.weight_format
        + "}<extra></extra>",
      colorbar: { title: { text: esc(S.home_weight), side: "right" }, thickness: 12, xpad: 8 },
    }], {
      font: FONT, height: height, width: width,
      margin: { l: l, r: MAP.r, t: MAP.t, b: b, autoexpand: false },
      xaxis: { range: [-0.5, C - 0.5], showticklabels: false, ticks: "", showgrid: false,
               zeroline: false, fixedrange: true },
      yaxis: { range: [R - 0.5, -0.5], showticklabels: false, ticks: "", showgrid: false,
               zeroline: false, fixedrange: true },
    }, CONFIG);
    $("map").style.width = width + "px";
    drawLabels(kind, shape, width, height, l, b, shownRows, shownCols);
  }

  function draw() {
    $("slider").value = String(state.k);
    $("step-label").textContent = fmt(S.home_step, { k: state.k, n: T });
    $("play").textContent = state.timer ? S.home_pause : S.home_play;
    drawTranslation();
    drawStep();
    drawMap();
    marker.dataset.step = String(state.k);
    if (options.onStep) options.onStep(state.k);
  }

  // --- stepping --------------------------------------------------------------------------
  function go(k) {
    state.k = Math.min(T, Math.max(1, k));
    draw();
  }
  function stop() {
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
  }
  function play() {
    if (state.timer) { stop(); draw(); return; }
    if (state.k >= T) state.k = 1;
    state.timer = setInterval(() => {
      if (state.k >= T) { stop(); draw(); return; }
      go(state.k + 1);
    }, 1000 / state.speed);
    draw();
  }
  $("first").addEventListener("click", () => { stop(); go(1); });
  $("prev").addEventListener("click", () => { stop(); go(state.k - 1); });
  $("next").addEventListener("click", () => { stop(); go(state.k + 1); });
  $("last").addEventListener("click", () => { stop(); go(T); });
  $("play").addEventListener("click", play);
  $("slider").addEventListener("input", (e) => { stop(); go(Number(e.target.value)); });
  $("speed").addEventListener("change", (e) => {
    state.speed = Number(e.target.value);
    if (state.timer) { stop(); play(); }
  });
  $("view").addEventListener("change", (e) => { state.view = e.target.value; draw(); });
  $("layer").addEventListener("change", (e) => { state.layer = Number(e.target.value); draw(); });
  $("head").addEventListener("change", (e) => { state.head = Number(e.target.value); draw(); });

  const KEYS = { ArrowRight: () => go(state.k + 1), PageDown: () => go(state.k + 1),
                 ArrowLeft: () => go(state.k - 1), PageUp: () => go(state.k - 1),
                 Home: () => go(1), End: () => go(T) };
  const OWNS_KEYS = /^(slider|radio|radiogroup|listbox|option|combobox|tab|tablist|menu|menuitem|spinbutton|textbox|switch|checkbox)$/;
  function onKey(e) {
    const el = e.target && e.target.nodeType === 1 ? e.target : null;
    const tag = (el && el.tagName) || "";
    if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) || (el && el.isContentEditable)
        || OWNS_KEYS.test((el && el.getAttribute("role")) || "")
        || e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) {
      return; // a widget keeps its own keys
    }
    if (e.key === " " && tag !== "BUTTON" && tag !== "A") {
      e.preventDefault(); play(); return;
    }
    if (KEYS[e.key]) { e.preventDefault(); stop(); KEYS[e.key](); }
  }
  document.addEventListener("keydown", onKey, !!options.keysCapture);

  // The page's column changed size (the window, the app's sidebar): the map fits it again.
  let lastRoom = null;
  const fit = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    const room = $("map").parentElement.clientWidth;
    if (lastRoom !== null && room !== lastRoom) drawMap();
    lastRoom = room;
  });
  if (fit) fit.observe($("map").parentElement);

  function destroy() {
    stop();
    if (fit) fit.disconnect();
    document.removeEventListener("keydown", onKey, !!options.keysCapture);
    const map = $("heatmap");
    if (map && Plotly.purge) Plotly.purge(map);
  }
  draw();
  return { doc: doc, state: state, go: go, play: play, stop: stop, destroy: destroy, T: T };
}
