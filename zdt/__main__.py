"""``python -m zdt``: the same as the ``zdt`` command (zdt.cli)."""

import sys

from zdt.cli import main

if __name__ == "__main__":
    sys.exit(main())
