"""The home page: what the studio does, and where to go."""
from __future__ import annotations

import streamlit as st

EXAMPLES = ["line(circulant(16,[3,4]),3)", "power(diamond(),2)", "torus(4,4,8)", "kautz(2,3)", "degree(complete(3),2)"]


def render() -> None:
    st.title("Topology Studio")
    st.markdown(
        "Design direct-connect accelerator networks and the schedules of their collectives.\n\n"
        "- **Compose** a topology from a family (rings, circulants, tori, Kautz and generalized Kautz, de Bruijn, "
        "distance-regular graphs, ...) and the direct-connect paper's expansions (line graph, degree expansion, "
        "Cartesian power and product, unidirectional to bidirectional), or upload a JSON/GraphML file; see it "
        "drawn beside its Moore bound.\n"
        "- **Schedule** an allgather, reduce-scatter or allreduce on it (ring, shortest-path trees, optimal BFB, "
        "expansion schedules), verified by a simulator, and compare steps and bandwidth cost with the lower "
        "bounds for the workload in the sidebar.\n"
        "- **Find** the Pareto-efficient designs for N nodes of degree d (steps against bandwidth cost, from the "
        "direct-connect paper's expansion search), the best one for your workload, and how the best allreduce "
        "time grows with N.\n"
        "- **Clusters**: build a DGX A100 or MI250 cluster, a two-level switched cluster or a fat-tree (or upload "
        "one), and let ForestColl find its throughput optimum, the cut that limits it, and spanning-tree "
        "schedules that reach it, exported as MSCCL XML.")
    from studio import navigation

    cols = st.columns(4)
    cols[0].page_link(navigation.COMPOSE, label="Compose a topology", icon=":material/hub:")
    cols[1].page_link(navigation.SCHEDULE, label="Schedule a collective", icon=":material/schedule:")
    cols[2].page_link(navigation.FINDER, label="Find a topology", icon=":material/travel_explore:")
    cols[3].page_link(navigation.CLUSTERS, label="Schedule a cluster", icon=":material/dns:")
    st.markdown("Some designs to start from (each link opens Compose):")
    for expr in EXAMPLES:
        st.markdown(f"- [`{expr}`](compose?expr={expr.replace('[', '%5B').replace(']', '%5D')})")
    st.caption("Every schedule is checked step by step by the simulator before it is shown, counted or exported. "
               "Times come from the runtime model: the schedule's sends pipelined over slices of the buffer, each "
               "holding its link for alpha + bytes / bandwidth (Learn, step 6); the papers' step model "
               "steps × alpha + tb_factor × M / B is shown beside it.")
