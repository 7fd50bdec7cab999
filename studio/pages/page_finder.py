"""The Finder page as a script for st.navigation (the page itself lives in studio/pages/finder.py)."""
from studio.pages.finder import render

render()
