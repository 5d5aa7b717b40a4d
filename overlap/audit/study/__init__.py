"""Auditing an image set: many targets in one run, each against its own reference (``overlap audit --targets``,
``--benchmark``).

Layout, top to bottom (a module imports only the rows below it)::

    run.py                 ``run_batch``: skip what is done, run the rest, write each result, the document
    execute.py             one target's audit in a child process or a Ray task
    routes_render.py       the routes table as text, CSV, MD and an HTML page with its plot
    routes.py, render.py   the routes table (a row per set, a column per route); the per-set table as text, CSV, MD
    render_html.py         the per-set table as an HTML page in the report's style
    table.py               the table's columns, declared once for every format
    summary.py             per-target entries and the per-set table (finding codes behind each column)
    estimate.py            a count's share and its Wilson interval for the whole set
    targets.py, naming.py  the targets file and each target's key; a benchmark's image names

The package sits above ``overlap.audit.run`` and calls ``audit()`` once per target, in a worker.
"""
