import sys

from memdoor.cli import main

sys.exit(main())
