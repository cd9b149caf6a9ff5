// Puts plotly.js (plotly's own plotly.min.js, data.source) on the page as window.Plotly, once,
// for the in-browser player (ui/player/in_browser.py). Streamlit's own charts keep their bundled copy.
// The element is the same on every run, so Streamlit sends its 4.7 MB once per session and
// afterwards only its hash.
export default function ({ data: sent }) {
  const data = Array.isArray(sent) ? sent[0] : sent; // the payload comes as [payload]
  if (window.Plotly || !data || !data.source || document.getElementById("plotly-js")) return;
  const script = document.createElement("script");
  script.id = "plotly-js";
  script.textContent = data.source; // a classic script: plotly.js sets window.Plotly
  document.head.append(script);
}
