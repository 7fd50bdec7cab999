"""The studio's figures: pure functions of the model that return plotly figures or ``spec.FigureSpec`` dicts (no
Streamlit, so notebooks use them too), the server's SVG drawing of them (``svg``), static images (``images``) and
how a page shows one (``charts``)."""
