"""Entry file for ``streamlit run`` (``planscope dashboard`` runs this file)."""

from planscope_dashboard._app import main

main()
