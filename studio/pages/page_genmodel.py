"""The GenModel page as a script for st.navigation (the page itself lives in studio/genmodel_view.py)."""
from studio.genmodel_view import render

render()
