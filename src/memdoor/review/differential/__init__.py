"""The review's differential stage (issue 43, items 2 and 3): run the changed functions on the base and on
the changed code with the same inputs, in the sandbox, and judge each difference that reproduces against
the change's description.

- :mod:`.functions`: which top-level functions and methods the change altered (Python, by syntax tree);
- :mod:`.trees`: the Python files of the base and the changed tree that the sandbox program carries;
- :mod:`.inputs`: call inputs, our own from each signature and the changed lines' literals, and the
  agents' (Python literals only);
- :mod:`.driver`: the program that runs in the sandbox and what it reports per call;
- :mod:`.execute`: both versions run, differences kept when they reproduce, the smallest input kept;
- :mod:`.intent`: intended, unintended or unclear, from the description (a rule, or the agents' ⌈N/2⌉);
- :mod:`.stage`: the stage as the review session runs it, and what it records.
"""
