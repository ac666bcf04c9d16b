"""Publishing: what micrograph writes for readers who do not run a REPL.

``tour`` (every lesson, picture and page, and the index linking them; ``swap``, its directory swapped in
whole), ``notebooks`` (each lesson as a Jupyter notebook, for the documentation and for Jupyter), ``site``
(the static browser edition: the page, Pyodide and micrograph's wheel; ``site_files``, what its page loads)
and ``web`` with ``web_check`` (what the browser edition's page asks of micrograph in Pyodide: lesson
steps, the explorer, an exercise check).
"""
