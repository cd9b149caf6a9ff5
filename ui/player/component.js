// The app's in-browser stepping (ui/player/in_browser.py): player.js's mountTracePlayer as a Streamlit
// components-v2 component, appended to player.js as one module. The trace document comes once
// per decoding (data.doc, its id data.id); stepping, Play, the pickers and the keys then run in
// the page with no message to the server. The step reaches the server only when the user next
// turns to the rest of the page (a pointer or the focus outside the player), as the state value
// "step", so the server's views open at the player's step; the link's step follows in the
// address bar at once. plotly.js is window.Plotly, put there by ui/player/loader.js.
export default function ({ data: sent, parentElement, setStateValue }) {
  const data = Array.isArray(sent) ? sent[0] : sent; // the payload comes as [payload]
  const host = parentElement;
  const root = host.querySelector(".player");
  if (!root || !data || !data.doc) return undefined;
  const sync = () => {
    const player = root.__player;
    if (player && player.state.k !== host.__sent) {
      host.__sent = player.state.k;
      setStateValue("step", player.state.k);
    }
  };
  host.__sync = sync;
  if (!host.__outside) { // the user turns to the rest of the page: tell the server the step
    host.__outside = (e) => { if (!host.contains(e.target) && host.__sync) host.__sync(); };
    document.addEventListener("pointerdown", host.__outside, true);
    document.addEventListener("focusin", host.__outside, true);
  }
  const showStep = (k) => { // the address bar's step, as the server's link writes it
    const url = new URL(window.location.href);
    if (url.searchParams.get("step") === String(k)) return;
    url.searchParams.set("step", String(k));
    window.history.replaceState(window.history.state, "", url);
  };
  const mount = () => {
    if (root.__player) root.__player.destroy();
    host.__sent = data.step;
    root.__player = mountTracePlayer(root, JSON.parse(data.doc), data.strings, {
      Plotly: window.Plotly, step: data.step, kept: host.__kept, keysCapture: true,
      present: !!data.present, onStep: showStep });
    root.__docId = data.id;
    root.__serverStep = data.step;
  };
  if (root.__docId !== data.id) {
    const start = () => (window.Plotly ? mount() : setTimeout(start, 20));
    start();
  } else if (data.step !== root.__serverStep) { // the server moved the step (not our sync)
    root.__serverStep = data.step;
    if (data.step !== host.__sent && root.__player) root.__player.go(data.step);
    host.__sent = data.step;
  }
  return () => {
    const player = root.__player;
    if (player) {
      host.__kept = { view: player.state.view, layer: player.state.layer,
                      head: player.state.head, speed: player.state.speed };
      player.destroy();
    }
    root.__player = root.__docId = null;
    document.removeEventListener("pointerdown", host.__outside, true);
    document.removeEventListener("focusin", host.__outside, true);
    host.__outside = host.__sync = null;
  };
}
