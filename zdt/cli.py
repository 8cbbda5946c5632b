"""The ``zdt`` command (installed as a console script; ``python -m zdt`` runs it too).

Subcommands:
  demo   zdt's codecs on real data, written to zarr arrays and read back
"""

from __future__ import annotations

import argparse
import sys


def _demo(args: argparse.Namespace) -> int:
    from zdt.demo import main as demo

    demo()
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zdt", description="Fast, exact data-type conversion codecs for Zarr.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="run zdt's codecs on real data (needs: pip install 'zdt[demo]')",
        description="Real temperature readings and weather strings written to zarr v3 arrays "
                    "through zdt's codecs and read back: stored codec metadata, bytes saved, "
                    "largest error and timings next to zarr's own codecs where present.")
    demo.set_defaults(run=_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not getattr(args, "run", None):
        p.print_help(sys.stderr)
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
