"""Streamlit pages; each module has a ``render()`` that app.py wires into the navigation."""
