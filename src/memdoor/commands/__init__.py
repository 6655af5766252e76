"""One module per ``memdoor`` subcommand: ``configure(parser)`` and ``run(args) -> int``."""
