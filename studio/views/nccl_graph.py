"""The NCCL graph file tab of the export panel (``studio.widgets.export_panel``): one host's rings and trees for
plain NCCL/RCCL (``solvers.export.nccl_graph``), read back and checked before its download appears."""
from __future__ import annotations

import streamlit as st


def nccl_graph_panel(topo, prefix: str = "") -> None:
    """A button, then the design's NCCL graph file (its summary, RCCL's ``NCCL_RINGS`` string and a download),
    or one line saying why the design has none. Widget keys are ``prefix`` + g*; the file is kept in the session
    under ``prefix + "ngraph"`` with the design's expression and shown while the page shows the same design."""
    from solvers.core.errors import NotApplicable
    from solvers.export.nccl_graph import GraphError, export_graph

    from studio.design import safe_stem

    st.caption("NCCL's own rings and trees, fixed to the design's: plain NCCL and RCCL load the file with "
               "NCCL_GRAPH_FILE=<file> (one host's channels; NCCL_TOPO_FILE where NCCL must be told the host's "
               "GPUs and NICs). RCCL also takes the rings as the NCCL_RINGS string.")
    held_key = f"{prefix}ngraph"
    asked = (topo.expr, topo.name, topo.n, len(topo.links))
    if st.button("Build NCCL graph file", key=f"{prefix}gbuild"):
        st.session_state.pop(held_key, None)
        with st.spinner("Finding the rings, writing, reading back and checking …"):
            try:
                st.session_state[held_key] = (asked, export_graph(topo))
            except (NotApplicable, GraphError) as exc:
                st.error(f"No NCCL graph file: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                return
    held = st.session_state.get(held_key)
    if not held or held[0] != asked:
        return
    text, report = held[1]
    stem = safe_stem(topo.name or topo.expr)
    st.success(f"Read back and checked as NCCL reads it: {report.summary(f'{stem}_nccl_graph.xml')}")
    st.markdown("RCCL's `NCCL_RINGS` (the same rings as a string):")
    st.code(report.nccl_rings, language=None)
    if report.tree_note:
        st.caption(report.tree_note)
    st.download_button("Download NCCL graph file", text, file_name=f"{stem}_nccl_graph.xml", mime="application/xml",
                       key=f"{prefix}gdownload", on_click="ignore")
