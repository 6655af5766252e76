"""Benchmarks: the bench loop, its SQLite results store, statistics, reports, charts and exports.

Entry points: :func:`memdoor.bench.loop.run_bench` (used by ``memdoor bench``),
:func:`memdoor.bench.analysis.analyse` and :func:`memdoor.bench.report.write_report`
(``memdoor report``), :mod:`memdoor.bench.export` (``memdoor export``).
"""
