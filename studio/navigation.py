"""The app's pages, created once so that pages can link to each other. Each page is a small script
(``studio/pages/page_*.py``) that calls the render function of its module."""
from __future__ import annotations

import streamlit as st

HOME = st.Page("studio/pages/page_home.py", title="Home", icon=":material/home:", url_path="home", default=True)
COMPOSE = st.Page("studio/pages/page_compose.py", title="Compose", icon=":material/hub:", url_path="compose")
SCHEDULE = st.Page("studio/pages/page_schedule.py", title="Schedule", icon=":material/schedule:",
                   url_path="schedule")
FINDER = st.Page("studio/pages/page_finder.py", title="Finder", icon=":material/travel_explore:", url_path="finder")
CLUSTERS = st.Page("studio/pages/page_clusters.py", title="Clusters", icon=":material/dns:", url_path="clusters")
GENMODEL = st.Page("studio/pages/page_genmodel.py", title="GenModel", icon=":material/calculate:",
                   url_path="genmodel")
COMPARE = st.Page("studio/pages/page_compare.py", title="Compare", icon=":material/compare_arrows:",
                  url_path="compare")
LEARN = st.Page("studio/pages/page_learn.py", title="Learn", icon=":material/school:", url_path="learn")
PAGES = [HOME, COMPOSE, SCHEDULE, COMPARE, FINDER, CLUSTERS, GENMODEL, LEARN]
