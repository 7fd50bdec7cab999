"""The floor of a page view (bench/load.py): a Streamlit page with a title and one line of text and nothing
else, served the same way as the studio, so that a load run can divide its figures by what the browser and
Streamlit themselves cost on this machine."""
import streamlit as st

st.title("Floor")
st.write(f"A trivial page: {st.query_params.get('n', '0')} nodes, nothing computed.")
