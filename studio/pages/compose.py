"""The Compose page: build a topology from a family and expansions, an expression or a file; see it drawn with
its properties beside their bounds; download it.

The expression lives in the page URL (``?expr=biring(8)``) so a design can be shared by link; the last design
that loaded is also what the Schedule page works on. An uploaded file (a machine's NCCL topology, nvidia-smi or
rocm-smi table, JSON or GraphML) has no expression: it becomes the session's design under the key ``import:`` +
its SHA-256 digest (``current_design``, ``load_design``) until an expression, a base or a built design replaces it.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from studio.figures import charts
from studio.figures.images import render_images
from studio.figures.topology import MAX_DRAWN_NODES, choose_layout, topology_figure
from studio.messages import for_page
from studio.metric_grid import metric_columns
from studio.uploads import read_machine
from studio.design import (DEFAULT_EXPR, IMPORT_PREFIX, adopt_import, current_design, hold_import, is_import,
                           load_expression, safe_stem)
from studio.expander import lazy_expander
from topologies.display import math_name
from topologies import TopologyError, summarize
from topologies.catalogue import BASES
from topologies.expression import DEFAULT_MAX_NODES, FAMILIES
from topologies.files import to_graphml, to_json

EXPANSIONS = {"line": "line graph L^n", "degree": "degree expansion ∗n", "power": "Cartesian power □n",
              "bidir": "bidirectional G ∪ G^T"}
EXAMPLE_ARGS = {"ring": "8", "uniring": "1,8", "biring": "8", "complete": "5", "bipartite": "4", "hamming": "2,3",
                "hypercube": "4", "kautz": "2,3", "gkautz": "4,64", "debruijn": "2,3", "circulant": "16,[3,4]",
                "dcirculant": "4", "torus": "4,4", "twisted_torus": "4,8", "dbjmod": "2,3", "paley": "9",
                "crown": "5", "odd_graph": "4", "doubled_odd": "4"}
STAGES = 3
def upload_name(upload) -> str:
    """An import's name: its file's, or the first file's and how many more."""
    files = list(upload) if isinstance(upload, (list, tuple)) else [upload]
    return files[0].name + (f" and {len(files) - 1} more" if len(files) > 1 else "")


def _drop_import() -> None:
    st.session_state.pop("design_import", None)


def _uploads_changed() -> None:
    """A file added: the expression box is emptied (the file is the design); every file removed: the import is
    no longer the design, and the expression box gets the last expression back."""
    if st.session_state.get("upload"):
        st.session_state["expr"] = ""
    else:
        _drop_import()
        st.session_state["expr"] = st.session_state.get("design_expr") or DEFAULT_EXPR


@st.cache_data(show_spinner=False, max_entries=64)
def _load_expr(expr: str):
    topo = load_expression(expr)
    return topo, summarize(topo)


@st.cache_data(show_spinner=False, max_entries=32)
def _figure(key: str, _topo):
    return topology_figure(_topo, layout=choose_layout(_topo))


@st.cache_data(show_spinner=False, max_entries=16)
def _summary(key: str, _topo):
    return summarize(_topo)


def _from_upload(upload):
    """(topology, summary, digest, what an import assumed or None) of one upload or a list of them (NCCL topology
    files, one per box)."""
    topo, digest, imported = read_machine(upload)
    if topo.n > DEFAULT_MAX_NODES:
        name = upload[0].name if isinstance(upload, list) else upload.name
        raise TopologyError(f"{name} has {topo.n} nodes, above the limit of {DEFAULT_MAX_NODES}")
    return topo, summarize(topo), digest, imported


def show_import(imported) -> None:
    """What a machine import assumed (generation, GB/s per link kind) and read past, under its design."""
    if imported is None:
        return
    for line in imported.assumed:
        st.caption(f"Assumed: {line}")
    for line in imported.notes:
        st.caption(f"Note: {line}")


def _properties(summary) -> None:
    cols = metric_columns(7)
    cols[0].metric("Nodes", summary.nodes)
    cols[1].metric("Degree", summary.degree)
    gap = None
    if summary.diameter is not None and summary.moore_diameter is not None:
        gap = summary.diameter - summary.moore_diameter
    cols[2].metric("Diameter", "∞" if summary.diameter is None else summary.diameter,
                   delta=None if gap is None else (f"+{gap} over Moore" if gap else "Moore optimal"),
                   delta_color="inverse" if gap else "off")
    cols[3].metric("Moore bound", "–" if summary.moore_diameter is None else summary.moore_diameter,
                   help="The smallest diameter any graph with this many nodes and this degree can have "
                        "(directed Moore bound for a directed topology, undirected for a bidirectional one).")
    cols[4].metric("Links", summary.links)
    cols[5].metric("Self-loops", summary.self_loops)
    cols[6].metric("Parallel links", summary.parallel_links)
    flags = [("directed" if summary.directed else "bidirectional"),
             ("regular" if summary.regular else "not regular"),
             ("strongly connected" if summary.strongly_connected else "NOT strongly connected")]
    if summary.switches:
        flags.append(f"{summary.switches} switches")
    st.caption(" · ".join(flags))


def _pick_from_catalogue() -> None:
    choice = st.session_state.get("catalogue")
    if choice in BASES:
        st.session_state["expr"] = choice
        _drop_import()


def _build_from_family() -> None:
    family = st.session_state["b_family"]
    expr = f"{family}({st.session_state.get('b_args', '').strip()})"
    for k in range(STAGES):
        step = st.session_state.get(f"b_exp{k}", "—")
        n = int(st.session_state.get(f"b_n{k}", 2))
        if step == "bidir":
            expr = f"bidir({expr})"
        elif step == "line":
            expr = f"line({expr})" if n == 1 else f"line({expr},{n})"
        elif step in EXPANSIONS:
            expr = f"{step}({expr},{n})"
    st.session_state["expr"] = expr
    _drop_import()


def _builder() -> None:
    leaves = [name for name in FAMILIES if name not in ("line", "degree", "power", "product", "bidir")]
    st.selectbox("Family", leaves, key="b_family", format_func=lambda f: FAMILIES[f].usage,
                 on_change=lambda: st.session_state.update(b_args=EXAMPLE_ARGS.get(st.session_state["b_family"], "")))
    st.session_state.setdefault("b_args", EXAMPLE_ARGS.get(st.session_state.get("b_family", leaves[0]), ""))
    st.text_input("Arguments", key="b_args", help="As in the expression, e.g. 16,[3,4] for circulant")
    for k in range(STAGES):
        c1, c2 = st.columns([3, 2])
        c1.selectbox(f"Expansion {k + 1}", ["—", *EXPANSIONS], key=f"b_exp{k}",
                     format_func=lambda e: EXPANSIONS.get(e, "none"))
        c2.number_input("n", min_value=1, max_value=16, value=2, key=f"b_n{k}")
    st.button("Build", key="b_build", on_click=_build_from_family, type="primary")


def _downloads(topo, fig) -> None:
    stem = safe_stem(topo.expr or topo.name or "topology", 60)
    cols = st.columns(4)
    cols[0].download_button("Topology JSON", to_json(topo), file_name=f"{stem}.json", mime="application/json",
                            key="dl_json", on_click="ignore")
    cols[1].download_button("GraphML", to_graphml(topo), file_name=f"{stem}.graphml", mime="application/xml",
                            key="dl_graphml", on_click="ignore")
    if fig is None:
        return
    images = st.session_state.setdefault("compose_images", {})
    if images.get("key") != stem:
        cols[2].button("Render PNG and SVG", key="render_images",
                       on_click=lambda: render_images(images, stem, {"figure": fig}))
        if images.get("error"):
            st.error(images["error"])
    else:
        cols[2].download_button("Figure PNG", images["figure.png"], file_name=f"{stem}.png", mime="image/png",
                                key="dl_png", on_click="ignore")
        cols[3].download_button("Figure SVG", images["figure.svg"], file_name=f"{stem}.svg", mime="image/svg+xml",
                                key="dl_svg", on_click="ignore")


def _design_inputs():
    """The design's inputs at the top of the page (the sidebar holds only the workload): the expression, a
    catalogue base, the family builder and an upload. Returns the upload (None without one)."""
    c1, c2 = st.columns([3, 2])
    c1.text_input("Expression", key="expr", on_change=_drop_import,
                  help="For example biring(8), kautz(2,3), circulant(16,[3,4]), torus(4,4,8), "
                       "line(circulant(16,[3,4]),3), power(diamond(),2), degree(complete(3),2), bidir(kautz(2,2))")
    c1.caption(f"Up to {DEFAULT_MAX_NODES} nodes; drawings up to {MAX_DRAWN_NODES} nodes.")
    c2.selectbox("…or a base from the catalogue", ["(choose)"] + list(BASES), key="catalogue",
                 format_func=lambda e: e if e not in BASES else f"{e}: {BASES[e]}",
                 on_change=_pick_from_catalogue)
    c1, c2, c3 = st.columns(3)
    # the builder and the family list are made only while open (lazy_expander): each element is browser work
    with lazy_expander("…or build from a family and expansions", "builder_open", c1) as box:
        if box:
            _builder()
    with c2.expander("…or a topology file, or your machine's"):
        upload = st.file_uploader("JSON or GraphML; NCCL topology XML (NCCL_TOPO_DUMP_FILE, one file per box); "
                                  "nvidia-smi topo -m or rocm-smi --showtopo output as .txt",
                                  type=["json", "graphml", "xml", "txt"], key="upload", accept_multiple_files=True,
                                  on_change=_uploads_changed)
        st.caption("Samples: examples/nccl-topo-dgx-a100.xml, examples/nvidia-smi-topo-8gpu.txt in the repository.")
    with lazy_expander("Families", "families_open", c3) as box:
        if box:
            st.markdown("\n".join(f"- `{fam.usage}`" for fam in FAMILIES.values()))
    return upload or None


def _adopt_url_expr() -> None:
    """Take the URL's ``?expr=`` as the design when it came from outside the page (a shared link, Home's examples
    and the Finder's buttons, which open this page in the same session); the page's own edits write the URL
    themselves and are kept. Without either, the last design that loaded (``design_expr``) or the default."""
    url = st.query_params.get("expr")
    if url is not None and url != st.session_state.get("compose_url_expr"):
        st.session_state["compose_url_expr"] = url
        if is_import(url):              # a link to an import, by its digest
            try:
                adopt_import(url)
                st.session_state["expr"] = ""
            except TopologyError as exc:
                st.error(for_page(exc))
                st.session_state["expr"] = st.session_state.get("design_expr") or DEFAULT_EXPR
        else:
            st.session_state["expr"] = url
            _drop_import()
    elif "expr" not in st.session_state or not str(st.session_state["expr"]).strip():
        imported = bool(st.session_state.get("upload")) or current_design()[0].startswith(IMPORT_PREFIX)
        st.session_state["expr"] = "" if imported else st.session_state.get("design_expr", DEFAULT_EXPR)


def render() -> None:
    st.title("Compose a topology")
    _adopt_url_expr()
    upload = _design_inputs()
    imported = None
    try:
        held = st.session_state.get("design_import")
        if upload is not None:
            topo, summary, digest, imported = _from_upload(upload)
            key = IMPORT_PREFIX + digest
            if not held or held["key"] != key or held["over"] != st.session_state.get("design_expr"):
                st.session_state["design_import"] = {"key": key, "name": upload_name(upload), "topology": topo,
                                                     "imported": imported,
                                                     "over": st.session_state.get("design_expr")}
            hold_import(key, topo, upload_name(upload))
            st.query_params["expr"] = key             # a link to the import: by its digest (``studio.design``)
            st.session_state["compose_url_expr"] = key
        elif held and current_design()[0] == held["key"]:       # the import stays the design after a page switch
            key, topo, imported = held["key"], held["topology"], held.get("imported")
            summary = _summary(key, topo)
            hold_import(key, topo, held["name"])
            st.query_params["expr"] = key
            st.session_state["compose_url_expr"] = key
        else:
            expr = st.session_state["expr"].strip()
            with st.spinner(f"Building {expr} …"):
                topo, summary = _load_expr(expr)
            key = expr
            st.query_params["expr"] = expr
            st.session_state["compose_url_expr"] = expr
            st.session_state["design_expr"] = expr
    except TopologyError as exc:
        st.error(for_page(exc))
        return
    st.subheader(math_name(topo.name or topo.expr))
    if key.startswith(IMPORT_PREFIX):
        st.info(f"The design is the import {current_design()[1]}: Schedule and the other pages work on it. Type "
                "an expression, pick a base or build one to replace it.", icon=":material/upload_file:")
    show_import(imported)
    _properties(summary)
    if not summary.strongly_connected:
        st.warning("Some compute node cannot reach another: no collective schedule exists on this topology.")
    fig = None
    if topo.num_nodes <= MAX_DRAWN_NODES:
        with st.spinner("Drawing …"):
            fig = _figure(key, topo)
        charts.show(fig, "topology_chart")
    else:
        st.info(f"{topo.num_nodes} nodes are too many to draw clearly (limit {MAX_DRAWN_NODES}); "
                "the properties above are exact.")
    _downloads(topo, fig)
    with lazy_expander(f"Links ({len(topo.links)})", "links_open") as box:
        if box:
            links = pd.DataFrame({"src": [topo.names[l.src] for l in topo.links],
                                  "dst": [topo.names[l.dst] for l in topo.links],
                                  "bandwidth": [float(l.bandwidth) for l in topo.links],
                                  "alpha": [float(l.alpha) for l in topo.links]})
            st.dataframe(links, key="links_table", height=240)
