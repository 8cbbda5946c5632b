"""The ``zdt`` command (installed as a console script; ``python -m zdt`` runs it too): a thin
layer over zdt.suggest / zdt.convert that parses options and prints what they return.

Subcommands (one module each in this package):
  inspect   the arrays of a store: types, chunks, codecs and who runs them, bytes
  suggest   the smallest encoding of an array that keeps an error bound, measured
  convert   a re-encoded copy of a store, chunk by chunk, the bound checked on every chunk
  compare   what an encoding did to the data: errors, PSNR, R^2, DSSIM, spectra, checks
  demo      zdt's codecs on real data, written to zarr arrays and read back, and their speed
  bench     the benchmarks against the peers, as a Markdown report with plots

Every failure is one line on stderr, ``zdt COMMAND: what failed``, and an exit status by kind
(docs/command.md, "Exit status"): 1 bad input, 2 usage, 3 storage, 130 / 143 interrupted /
terminated, 141 a closed pipe. Never a traceback: an error zdt did not foresee is reported on
one line too (ZDT_DEBUG=1 shows its traceback). The command prints its own lines only: the
warnings of the libraries it drives are not shown unless python -W / PYTHONWARNINGS ask.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from importlib import import_module

COMMANDS = ("inspect", "suggest", "convert", "compare", "demo", "bench")
# the extra of zdt that brings each package a subcommand may need
EXTRAS = {"zarr": "zarr", "tqdm": "zarr", "vega_datasets": "demo", "matplotlib": "bench",
          "s3fs": "stores", "fsspec": "stores", "aiohttp": "stores", "icechunk": "stores",
          "distributed": "stores", "dask": "stores", "pyarrow": "arrow"}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zdt", description="Shrink zarr datasets within an error bound, and fast, exact "
                                "data-type conversion codecs for Zarr.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        import_module(f"zdt.command.{name}").add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not getattr(args, "run", None):
        p.print_help(sys.stderr)
        return 2
    from zdt.errors import JobError, for_command

    def fail(message: str, status: int) -> int:
        print(f"zdt {args.command}: {message}", file=sys.stderr)
        return status

    try:
        with quiet_warnings():
            rc = args.run(args)
        sys.stdout.flush()                        # a closed pipe shows here, not at exit
        return rc
    except JobError as exc:
        text = for_command(exc)
        return fail(text.splitlines()[0] if text else type(exc).__name__, exc.exit_status)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if not top or top == "zdt":
            return _unforeseen(fail, exc)
        extra = EXTRAS.get(top)
        hint = f"pip install 'zdt[{extra}]'" if extra else f"pip install {top}"
        return fail(f"this needs the package {top!r}, which is not installed: {hint}", 1)
    except BrokenPipeError:
        # the reader went away (zdt inspect --json | head): end quietly, as Unix tools do; point
        # stdout at /dev/null so the interpreter's final flush does not complain again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13                           # what a shell reports for a tool SIGPIPE ended
    except KeyboardInterrupt as exc:
        from zdt.errors import Terminated

        terminated = isinstance(exc, Terminated)
        kept = getattr(exc, "zdt_kept", None)
        print(f"zdt {args.command}: {'terminated' if terminated else 'interrupted'}"
              + (f"; {kept}" if kept else ""), file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        # the work is settled already (convert keeps its partial copy for --resume); leave now,
        # without the asyncio shutdown noise zarr's interrupted event loop would print
        os._exit(143 if terminated else 130)
    except Exception as exc:                      # noqa: BLE001 (the one-line rule)
        return _unforeseen(fail, exc)


@contextlib.contextmanager
def quiet_warnings() -> Iterator[None]:
    """The command prints its own lines only: the warnings of the libraries it drives (xarray's
    SerializationWarning on a file's CF attributes, NumPy's on arithmetic) are not its output.
    Only for the command's run: code calling zdt's functions sees them as before; python -W or
    PYTHONWARNINGS still decide when given."""
    if sys.warnoptions:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _unforeseen(fail: object, exc: BaseException) -> int:
    """An error zdt did not foresee: one line all the same, and the way to see more."""
    if os.environ.get("ZDT_DEBUG"):
        raise exc
    text = str(exc).strip().splitlines()
    what = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return fail(f"{what} (an error zdt does not explain yet: please report it; ZDT_DEBUG=1 "  # type: ignore[operator]
                f"shows where it happened)", 70)


if __name__ == "__main__":
    sys.exit(main())
