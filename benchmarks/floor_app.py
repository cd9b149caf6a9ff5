"""The floor for ``benchmarks/clicks.py``: the least a Streamlit click that redraws Plotly
charts can cost on this machine today. One button; each click reruns the script, which
draws ``?charts=N`` (default 1) small heatmaps with new data, titled "Step <clicks>".

    streamlit run benchmarks/floor_app.py     # then open /?charts=2

The app's own clicks are read against it: what they cost beyond a trivial app with as many
charts (the machine's speed varies from day to day; the floor moves with it).
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.session_state.setdefault("clicks", 0)
if st.button("Next", key="next"):
    st.session_state["clicks"] += 1
n = st.session_state["clicks"]
try:
    charts = min(max(int(st.query_params.get("charts", "1")), 1), 4)
except ValueError:
    charts = 1
for i in range(charts):
    z = np.random.default_rng([n, i]).random((6, 6))  # (6, 6) weights, new on every click
    fig = go.Figure(go.Heatmap(z=z, zmin=0, zmax=1),
                    layout=dict(title=dict(text=f"Step {n}"), width=500, height=400,
                                template=None))
    st.plotly_chart(fig, theme=None, width="content", key=f"chart{i}")
