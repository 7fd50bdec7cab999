"""The Clusters page as a script for st.navigation (the page itself lives in studio/pages/clusters.py)."""
from studio.pages.clusters import render

render()
