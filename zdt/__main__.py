"""``python -m zdt``: the same as the ``zdt`` command (zdt.command)."""

import sys

from zdt.command import main

if __name__ == "__main__":
    sys.exit(main())
