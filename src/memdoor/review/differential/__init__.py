"""The review's differential stage (issue 43, items 2 and 3): run the changed functions and programs on the
base and on the changed code with the same inputs, in the sandbox, and judge each difference that
reproduces against the change's description.

Finding targets, per language:

- :mod:`.kinds`: every kind of target in one place: the files that hold them, their inputs, the agents' asks;
- :mod:`.targets`: the seam every target fits (:class:`~.targets.Changed`, :class:`~.targets.Batch`);
- :mod:`.functions`: Python functions and methods the change altered, by syntax tree;
- :mod:`.jsfunctions`: JavaScript functions and class methods the change altered, by tokens (:mod:`.jsscan`:
  the scanner; :mod:`.jsclasses`: top-level classes and their members);
- :mod:`.rustfunctions`: Rust functions the change altered, by masked text (``sandbox.lang.rustscan``: masks);
- :mod:`.programs`: changed standard-input programs (Python, JavaScript, Rust).

Inputs:

- :mod:`.inputs`: a Python function's calls, ours and the agents' (Python literals only);
- :mod:`.examples`: calls found in the base's doctests and tests; :mod:`.variations`: their neighbours;
- :mod:`.json_inputs`: JavaScript and Rust functions' calls as JSON argument lists;
- :mod:`.rust_inputs`: which Rust types take values, and each value as a Rust literal that compiles;
- :mod:`.stdin_inputs`: a program's standard-input texts, mined, ours and the agents';
- :mod:`.answers`: an agent's answer read strictly as a JSON list of inputs.

Drivers (the programs that run in the sandbox):

- :mod:`.driver`: Python functions and programs, one line reported per call;
- :mod:`.node`: JavaScript functions and programs;
- :mod:`.rust_driver`: a Rust program wrapped, or a harness of a file's changed functions;
- :mod:`.rust_pair`: both versions of a Rust file in each harness (one that does not compile is a note).

Running both versions:

- :mod:`.trees`: the Python files of the base and of the changed tree the driver carries;
- :mod:`.sources`: the other languages' files of both trees, and the base's tests to mine;
- :mod:`.plan`: the batches of a review, one program per version and language;
- :mod:`.execute`: both versions run, differences kept when they reproduce, the smallest input kept.
- :mod:`.shrink`: a difference's input made smaller (every language; a Rust function's smaller inputs fit its
  parameter types and run in a harness of their own, one per round).

Judging: :mod:`.intent`: intended, unintended or unclear, from the description (a rule, or the agents').

The stage: :mod:`.stage`: the stage as the review session runs it, its findings and what it records.
"""
