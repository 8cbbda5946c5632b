"""The ``zdt`` command (installed as a console script; ``python -m zdt`` runs it too).

Subcommands (one module each in this package):
  inspect   the arrays of a store: types, chunks, codecs and who runs them, bytes
  suggest   the smallest encoding of an array that keeps an error bound, measured
  convert   a re-encoded copy of a store, chunk by chunk, the bound checked on every chunk
  demo      zdt's codecs on real data, written to zarr arrays and read back, and their speed
  bench     the benchmarks against the peers, as a Markdown report with plots
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

from zdt.command.errors import CommandError

COMMANDS = ("inspect", "suggest", "convert", "demo", "bench")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zdt", description="Fast, exact data-type conversion codecs for Zarr.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        import_module(f"zdt.command.{name}").add_parser(sub)
    return p


def require_zarr() -> None:
    """The command works on zarr stores through zarr-python 3 (an extra of zdt's)."""
    try:
        import zarr
    except ImportError:
        raise CommandError("zdt's zarr face needs zarr >= 3.1, which is not installed: "
                           "pip install 'zdt[zarr]'") from None
    major = int(zarr.__version__.split(".")[0])
    if major < 3:
        raise CommandError(f"zdt's zarr face needs zarr >= 3.1; zarr {zarr.__version__} is "
                           "installed: pip install 'zdt[zarr]'")


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not getattr(args, "run", None):
        p.print_help(sys.stderr)
        return 2
    try:
        require_zarr()
        rc = args.run(args)
        sys.stdout.flush()                        # a closed pipe shows here, not at exit
        return rc
    except CommandError as exc:
        print(f"zdt {args.command}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader went away (zdt inspect --json | head): end quietly, as Unix tools do; point
        # stdout at /dev/null so the interpreter's final flush does not complain again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13                           # what a shell reports for a tool SIGPIPE ended
    except KeyboardInterrupt as exc:
        terminated = type(exc).__name__ == "Terminated"
        print(f"zdt {args.command}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        # the work is cleaned up already (convert removes its partial output); leave now,
        # without the asyncio shutdown noise zarr's interrupted event loop would print
        os._exit(143 if terminated else 130)


if __name__ == "__main__":
    sys.exit(main())
