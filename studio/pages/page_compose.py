"""The Compose page as a script for st.navigation (the page itself lives in studio/pages/compose.py)."""
from studio.pages.compose import render

render()
