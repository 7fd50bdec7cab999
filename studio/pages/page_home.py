"""The Home page as a script for st.navigation (the page itself lives in studio/pages/home.py)."""
from studio.pages.home import render

render()
