"""Memdoor: teams of language models solving programming problems, measured honestly.

Importing this package has no side effects. The public interfaces live in
:mod:`memdoor.core.protocols`; records in the modules named for what they hold.
"""

__version__ = "0.1.0"
