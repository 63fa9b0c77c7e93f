"""The terminal tables of the ``assay`` commands, one module per command family.

Library modules return data (reports, summaries, score tables); these modules turn it into
:class:`rich.table.Table` objects for the commands to print. Undefined figures print as "—";
their reasons are in the commands' ``--json`` output. :mod:`assay.cli.tables.cells` formats
one cell.
"""
