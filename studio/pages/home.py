"""The home page: what the studio does, one line and a link for every page, and example designs that open on
Compose in the same tab."""
from __future__ import annotations

import streamlit as st

# (expression, what it shows). Every one opens on Compose and is drawn there (at most studio.figures'
# MAX_DRAWN_NODES nodes; tests/test_home_page.py holds them to it); the first is also the README's share link.
EXAMPLES = [
    ("line(circulant(16,[3,4]),2)", "L²(C(16,{3,4})): a circulant of 16 nodes expanded twice by the line graph, "
                                    "256 nodes of degree 4, diameter 5"),
    ("gkautz(4,64)", "Π₄,₆₄, a generalized Kautz graph: 64 nodes of degree 4 at the Moore bound's diameter 3"),
    ("power(diamond(),2)", "a Cartesian power of the diamond: 64 nodes of degree 4"),
    ("torus(4,4,8)", "a 3-D torus of 128 nodes, bidirectional"),
    ("kautz(2,3)", "the Kautz graph K(2,3): 24 nodes of degree 2"),
    ("degree(complete(3),2)", "a degree expansion of K₃: 6 nodes of degree 4"),
]


def render() -> None:
    from studio import navigation

    st.title("Topology Studio")
    st.markdown("Design direct-connect accelerator networks and the schedules of their collectives: Compose a "
                "topology, Schedule its allgather, reduce-scatter or allreduce, and see how long it takes for the "
                "workload in the sidebar.")
    for page, title, icon, line in navigation.listed():
        c1, c2 = st.columns([1, 5], vertical_alignment="center")
        c1.page_link(page, label=title, icon=icon)
        c2.markdown(line)
    st.subheader("Designs to start from")
    st.caption("Each opens on Compose, drawn, with its properties beside their bounds.")
    for expr, about in EXAMPLES:
        c1, c2 = st.columns([2, 4], vertical_alignment="center")
        c1.page_link(navigation.COMPOSE, label=f"`{expr}`", icon=":material/hub:", query_params={"expr": expr})
        c2.markdown(about)
    st.caption("Every schedule is checked step by step by the simulator before it is shown, counted or exported. "
               "Times come from the runtime model: the schedule's sends pipelined over slices of the buffer, each "
               "holding its link for alpha + bytes / bandwidth (Learn, step 6); the papers' step model "
               "steps × alpha + tb_factor × M / B is shown beside it.")
