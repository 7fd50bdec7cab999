"""The Learn page as a script for st.navigation (the page itself lives in studio/pages/learn.py)."""
from studio.pages.learn import render

render()
