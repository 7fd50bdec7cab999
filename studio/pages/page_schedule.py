"""The Schedule page as a script for st.navigation (the page itself lives in studio/pages/schedule.py)."""
from studio.pages.schedule import render

render()
