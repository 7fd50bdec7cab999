"""bench/floor_app.py's trivial page plus one kind of element, chosen by the query parameter ``v``
(bench/widget_cost.py): what each kind costs a browser on top of the floor. Every variant shows the same line
": 12 nodes, " that the bench waits for. The variants' names are bench/widget_cost.py's ``VARIANTS``. Two add no
element but a behaviour: ``deltas`` updates one slot fifty times, and ``slow`` keeps its script running 5 s after
the line shows (Streamlit's running icon meanwhile)."""
import streamlit as st


def body() -> None:
    v = st.query_params.get("v", "floor")
    st.title("Floor")
    st.write("A trivial page: 12 nodes, nothing computed.")
    if v == "st_metric":                              # ten, as on Schedule, with deltas and help
        for _ in range(2):
            for k, col in enumerate(st.columns(5)):
                col.metric(f"m{k}", 100 + k, delta=f"bound {k}", delta_color="off", help="help")
    elif v == "metric_grid":
        from studio.metric_grid import metric_columns

        for _ in range(2):
            for k, col in enumerate(metric_columns(5)):
                col.metric(f"m{k}", 100 + k, delta=f"bound {k}", delta_color="off", help="help")
    elif v == "selectbox":
        st.selectbox("Algorithm", ["bfb", "ring"], help="help")
    elif v == "pills":                                # the same choice as pills, and as a segmented control
        st.pills("Algorithm", ["bfb", "ring", "tree", "forestcoll", "teccl", "tacos"], default="bfb", help="help")
    elif v == "segmented":
        st.segmented_control("Collective", ["allgather", "reduce_scatter", "allreduce"], default="allgather",
                             help="help")
    elif v == "number_inputs":
        for label in ("M", "alpha", "B"):
            st.number_input(label, value=1.0, help="help")
    elif v == "radio":
        st.radio("Link prices", ["uniform", "links", "calibrated"], help="help")
    elif v == "slider":
        st.slider("Step", 1, 5, 1)
    elif v == "uploader":                             # in a closed box, as the measured log's was
        with st.expander("Measured"):
            st.file_uploader("Benchmark log", help="help")
    elif v == "downloads":
        for k, col in enumerate(st.columns(3)):
            col.download_button(f"file {k}", "abc", file_name=f"f{k}.txt")
    elif v == "images":                               # five SVG images of 800 marks each
        marks = "".join(f"<rect x='{i % 40 * 10}' y='{i // 40 * 10}' width='9' height='9' fill='#c33'/>"
                        for i in range(800))
        svg = f"<svg xmlns='http://www.w3.org/2000/svg' width='400' height='300'>{marks}</svg>"
        for k in range(5):
            st.markdown(f"**Figure {k}**")
            st.image(svg, width=400)
    elif v == "tabs":
        one, two = st.tabs(["one", "two"])
        one.write("first")
        two.write("second")
    elif v == "deltas":                               # fifty updates of one slot, spread out as a script's work is
        import time

        slot = st.empty()
        for k in range(50):
            slot.markdown(f"working: {k}")
            time.sleep(0.01)
        slot.empty()
    elif v in ("trickle", "burst"):                   # forty elements, 50 ms apart or all at once
        import time

        for k in range(40):
            st.caption(f"line {k}: some page text")
            if v == "trickle":
                time.sleep(0.05)
    elif v == "slow":                                 # the script runs 5 s after its text shows
        import time

        time.sleep(5)
    elif v == "expander":
        with st.expander("A closed box"):
            st.write("inside")


_V = st.query_params.get("v")
if _V in ("page_menu", "page_menu_icons", "top_menu", "shell"):   # the studio's page menu: nine pages
    icon = None if _V == "page_menu" else ":material/hub:"
    pages = [st.Page(body, title="Home", url_path="home", default=True, icon=icon)]
    pages += [st.Page(lambda: None, title=f"Page {k}", url_path=f"page{k}", icon=icon) for k in range(8)]
    page = st.navigation(pages, position="top" if _V == "top_menu" else "sidebar")
    if _V == "shell":                                 # the rest of the studio's sidebar (app.py)
        with st.sidebar:
            st.markdown("**Workload**")
            st.caption("M = 1e+09 bytes; prices: uniform.")
            with st.expander("Change the workload"):
                pass
            st.divider()
            st.toggle("Interactive charts", help="help")
    page.run()
elif _V == "toggle":
    body()
    st.sidebar.toggle("Interactive charts", help="help")
elif _V == "sidebar_text":
    body()
    st.sidebar.markdown("**Workload**")
else:
    body()
