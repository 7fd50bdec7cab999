"""The Compare page as a script for st.navigation (the page itself lives in studio/pages/compare.py)."""
from studio.pages.compare import render

render()
