"""The Compose page: build a topology from an expression or a file, see it drawn with its properties.

The expression lives in the page URL (``?expr=biring(8)``) so a design can be shared by link.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from studio.figures import MAX_DRAWN_NODES, topology_figure
from topologies import TopologyError, load, summarize
from topologies.catalogue import BASES
from topologies.expression import FAMILIES
from topologies.files import MAX_FILE_BYTES, from_graphml, from_json

DEFAULT_EXPR = "biring(8)"


@st.cache_data(show_spinner=False, max_entries=64)
def _load_expr(expr: str):
    topo = load(expr)
    return topo, summarize(topo)


def _from_upload(upload):
    data = upload.getvalue()
    if len(data) > MAX_FILE_BYTES:
        raise TopologyError(f"{upload.name} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TopologyError(f"{upload.name} is not UTF-8 text") from None
    reader = from_graphml if upload.name.lower().endswith(".graphml") else from_json
    topo = reader(text, source=upload.name)
    return topo, summarize(topo)


def _properties(summary) -> None:
    cols = st.columns(5)
    cols[0].metric("Nodes", summary.nodes)
    cols[1].metric("Degree", summary.degree)
    cols[2].metric("Diameter", "∞" if summary.diameter is None else summary.diameter)
    cols[3].metric("Moore bound", "–" if summary.moore_diameter is None else summary.moore_diameter,
                   help="The smallest diameter any graph with this many nodes and this degree can have "
                        "(directed Moore bound for a directed topology, undirected for a bidirectional one).")
    cols[4].metric("Links", summary.links)
    flags = [("directed" if summary.directed else "bidirectional"),
             ("regular" if summary.regular else "not regular"),
             ("strongly connected" if summary.strongly_connected else "NOT strongly connected")]
    st.caption(" · ".join(flags))


def _pick_from_catalogue() -> None:
    choice = st.session_state.get("catalogue")
    if choice in BASES:
        st.session_state["expr"] = choice


def render() -> None:
    st.title("Compose a topology")
    params_expr = st.query_params.get("expr", DEFAULT_EXPR)
    if "expr" not in st.session_state:
        st.session_state["expr"] = params_expr
    with st.sidebar:
        st.text_input("Expression", key="expr",
                      help="For example biring(8), kautz(2,3), circulant(16,[3,4]), torus(4,4,8), "
                           "line(circulant(16,[3,4]),3), power(diamond(),2), degree(complete(3),2), bidir(kautz(2,2))")
        st.selectbox("…or a base from the catalogue", ["(choose)"] + list(BASES), key="catalogue",
                     format_func=lambda e: e if e not in BASES else f"{e}: {BASES[e]}",
                     on_change=_pick_from_catalogue)
        upload = st.file_uploader("…or a topology file", type=["json", "graphml"], key="upload")
        with st.expander("Families"):
            for fam in FAMILIES.values():
                st.markdown(f"- `{fam.usage}`")
    try:
        if upload is not None:
            topo, summary = _from_upload(upload)
        else:
            expr = st.session_state["expr"].strip()
            topo, summary = _load_expr(expr)
            st.query_params["expr"] = expr
    except TopologyError as exc:
        st.error(str(exc))
        return
    st.subheader(topo.name or topo.expr)
    _properties(summary)
    if not summary.strongly_connected:
        st.warning("Some compute node cannot reach another: no collective schedule exists on this topology.")
    if topo.num_nodes <= MAX_DRAWN_NODES:
        st.plotly_chart(topology_figure(topo), key="topology_chart")
    else:
        st.info(f"{topo.num_nodes} nodes are too many to draw clearly (limit {MAX_DRAWN_NODES}); "
                "the properties above are exact.")
    links = pd.DataFrame({"src": [topo.names[l.src] for l in topo.links],
                          "dst": [topo.names[l.dst] for l in topo.links],
                          "bandwidth": [float(l.bandwidth) for l in topo.links],
                          "alpha": [float(l.alpha) for l in topo.links]})
    with st.expander(f"Links ({len(links)})"):
        st.dataframe(links, key="links_table", height=240)
