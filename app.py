"""Topology Studio: the Streamlit entry point (page wiring only)."""
import streamlit as st

from studio.pages import compose

st.set_page_config(page_title="Topology Studio", layout="wide")
page = st.navigation([st.Page(compose.render, title="Compose", url_path="compose", default=True)])
page.run()
