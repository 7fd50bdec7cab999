"""Topology Studio: the Streamlit entry point (page wiring and the shared sidebar only)."""
import streamlit as st

st.set_page_config(page_title="Topology Studio", layout="wide")

from studio import navigation, workload  # noqa: E402  (set_page_config must come first)
from studio.figures import charts  # noqa: E402

page = st.navigation(navigation.pages())       # fresh page objects every run (navigation.pages)
workload.sidebar()
charts.toggle()
page.run()
