"""Programs whose LiveCodeBench verdicts are known: the rules of comparing output and of running stdin programs.

Shared by test_sandbox_stdin_rules.py (our sandbox) and test_parity.py (the official grader).
"""

SUM = "a, b = map(int, input().split())\n"

COMPARISON = [
    # (program, expected output, passes)
    (SUM + "print(a + b)", "3\n", True),
    (SUM + "print(str(a + b) + '   ')", "3\n", True),  # trailing spaces
    (SUM + "print()\nprint(a + b)\nprint()\nprint()", "3\n", True),  # blank lines around
    (SUM + "print(f'{a + b}.0')", "3\n", True),  # 3.0 == 3 as Decimal
    (SUM + "print(f'{a + b}.0001')", "3\n", False),  # no epsilon
    (SUM + "print(a + b, end='\\r\\n')", "3\n", True),  # CRLF: each line is stripped
    (SUM + "print(a + b)\nprint(0)", "3\n", False),  # extra line
    (SUM + "print(a - b)", "3\n", False),
    (SUM + "print(a, b)", "1  2\n", True),  # same Decimal tokens, different spacing
    (SUM + "print('a', 'b')", "a  b\n", False),  # not numbers: lines differ
    (SUM + "print(a)\nprint()\nprint(b)", "1\n2\n", False),  # a blank line inside counts
    (SUM + "print('1e0')", "1\n", True),  # Decimal('1e0') == Decimal('1')
    (SUM + "print('nan')", "nan\n", True),  # equal as strings
    (SUM + "print('NaN 1')", "nan 1\n", False),  # Decimal NaN never equals
    (SUM + "print(a + b, end='')", "3", True),  # no final newline
    (SUM + "print('3', '')", "3\n", True),
]

RUNNING = [
    # How programs run: __main__ guard, exit(), the way stdin is offered.
    (
        "import sys\ndef main():\n    print(sum(map(int, sys.stdin.read().split())))\nif __name__ == '__main__':\n    main()",
        True,
    ),
    (SUM + "print(a + b)\nexit(0)\nprint('after exit')", True),
    (SUM + "print(a + b)\nimport sys\nsys.exit()", True),
    (SUM + "print(a + b)\nquit()", False),  # the official guard sets quit = None
    (SUM + "c = input()\nprint(a + b)", False),  # reads past the end
    ("import sys\nprint(sum(int(x) for line in sys.stdin for x in line.split()))", True),
    (
        "import sys\nx = sys.stdin.readline()\nprint(sum(map(int, x.split())) if x.endswith('\\n') else 'no newline')",
        True,
    ),
    ("import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())))", False),  # StringIO has no .buffer
    (
        "x = 0\ndef bump():\n    global x\n    x += 3\nbump()\nprint(x)",
        False,
    ),  # the program body becomes a function
    ("def main():\n    print(3)\nmain()\nif __name__ == '__main__':\n    pass\nprint('', end='')", True),
    ("import sys\nsys.stdout.write('3\\n')", True),
    ("stdout.write('3\\n')", False),  # the prelude's `from sys import *` binds the real stdout
    ("from sys import stdin\na, b = map(int, stdin.readline().split())\nprint(a + b)", True),
    ("import sys\ninput = sys.stdin.readline\na, b = map(int, input().split())\nprint(a + b)", True),
    ("import sys\nsys.stdout.buffer.write(b'3\\n')", False),  # StringIO has no .buffer
    ("import os\nprint(sum(map(int, os.read(0, 100).split())))", False),  # fd 0 is not the input
    ("import sys\nprint(3, file=sys.stderr)\nprint(3)", True),
    ("import sys\nsys.stdout.write('3')\nsys.stdout.flush()", True),
    ("print(3)\nraise SystemExit(1)", True),  # any SystemExit ends the program normally
    ("print(3)\nimport os\nos._exit(0)", False),  # the process is gone before the output is read
    ("sys.setrecursionlimit(10 ** 6)\nprint(3)", True),
]

FUNCTIONAL = [
    # (program defining f(x), called with x = 0; expected JSON; passes): a tuple result becomes a list (top level only), then ==.
    ("def f(x):\n    return (1, 2)\n", "[1, 2]", True),
    ("def f(x):\n    return [(1, 2)]\n", "[[1, 2]]", False),
    ("def f(x):\n    return 3.0\n", "3", True),
    ("def f(x):\n    return 0.1 + 0.2\n", "0.3", False),
    ("def f(x):\n    return True\n", "1", True),
    ("def f(x):\n    return {'a': [1, 2]}\n", '{"a": [1, 2]}', True),
    ("def f(x):\n    return {1: 2}\n", '{"1": 2}', False),
    ("def f(x):\n    return '1'\n", "1", False),
    ("def f(x):\n    return None\n", "null", True),
    ("def f(x):\n    return {1, 2}\n", "[1, 2]", False),
    ("def f(x):\n    return 10 ** 60\n", str(10**60), True),
    ("def f(x):\n    return (x for x in [1])\n", "[1]", False),
    ("from decimal import Decimal\ndef f(x):\n    return Decimal('2.50')\n", "2.5", True),
    ("from fractions import Fraction\ndef f(x):\n    return Fraction(1, 2)\n", "0.5", True),
    ("import collections\ndef f(x):\n    return collections.OrderedDict(a=1)\n", '{"a": 1}', True),
    ("import enum\nclass E(enum.IntEnum):\n    A = 4\ndef f(x):\n    return E.A\n", "4", True),
    ("def f(x):\n    exit(0)\n", "0", False),
    ("def f(x):\n    print('noise')\n    return [1]\n", "[1]", True),
    ("import sys\ndef f(x):\n    sys.stdout.write('x')\n    return 1\n", "1", True),
    ("def f(x):\n    return float('inf')\n", "1e999", True),
    ("def f(x):\n    return [1, [2, (3,)]]\n", "[1, [2, [3]]]", False),
    ("class Solution:\n    def f(self, x):\n        return 7\n", "7", True),
    (
        "class Solution:\n    def __init__(self, x):\n        pass\n    def f(self, x):\n        return 7\n",
        "7",
        False,
    ),
    ("def f(x):\n    return 7\nclass Solution:\n    pass\n", "7", False),
    ("def g():\n    return 7\n", "7", False),
    ("f = 7\n", "7", False),
]

NUMPY = [
    # (program defining f(x), expected JSON, passes) with numpy, which the official grader's environment has.
    ("import numpy as np\ndef f(x):\n    return int(np.int64(3))\n", "3", True),
    ("import numpy as np\ndef f(x):\n    return np.int64(3)\n", "3", True),
    ("import numpy as np\ndef f(x):\n    return np.float64(0.5)\n", "0.5", True),
    ("import numpy as np\ndef f(x):\n    return np.array([1, 2]).tolist()\n", "[1, 2]", True),
    ("import numpy as np\ndef f(x):\n    return np.array([1, 2])\n", "[1, 2]", False),
    ("import numpy as np\ndef f(x):\n    return [np.int64(1), np.int64(2)]\n", "[1, 2]", True),
    ("import numpy as np\ndef f(x):\n    return np.bool_(True)\n", "true", True),
]
NUMPY += [
    (
        "import numpy as np\ndef f(x):\n    return np.array([7])\n",
        "[7]",
        True,
    ),  # a one-element array is truthy
    ("import numpy as np\ndef f(x):\n    return np.array([7])\n", "7", True),
]
