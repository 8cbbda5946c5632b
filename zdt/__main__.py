"""Command line: ``python -m zdt demo``."""

import sys


def main(argv: list[str]) -> int:
    if argv[:1] == ["demo"]:
        from zdt.demo import main as demo

        demo()
        return 0
    print("usage: python -m zdt demo", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
