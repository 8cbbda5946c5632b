"""Everything zdt knows about zarr's insides: what differs between the zarr versions zdt
supports (3.1.x on Python 3.11, the newest on 3.12), and the few places where zdt reaches into
zarr because zarr has no public route. Each of the latter has a test in
tests/pipeline/test_zarr_compat.py that fails loudly the day zarr changes under it.

* zarr >= 3.2 ships its own ``cast_value`` and ``scale_offset``. Two classes under one codec
  name make zarr warn on every lookup unless ``codecs.<name>`` is configured; zdt installs
  ``<prefix>/etc/zarr/zdt.yaml`` (read by zarr's config at import) naming its classes
  (`IMPLEMENTATIONS`), and anything the user configures wins. Nothing else is configured.
* Newer zarr hands each codec the array spec as transformed by the codecs before it
  (``evolve_from_array_spec``/``validate``/``resolve_metadata`` threaded through the chain);
  older zarr (3.1.x, 3.2.x) hands every codec the array's own spec. Which one is running is
  found by a probe, not a version number; on the older one `array_spec_before` recovers the
  real spec from zarr's metadata constructor (no public route).
* `stop_zarr_io`: zarr's IO event loop (``zarr.core.sync``), stopped on the way out of an
  interrupted ``zdt convert``.
* `set_string_serializer`: the serializer of new string arrays, for ``use_string_codecs()``.
* `passes_string_codec_check`: zarr checks a string codec by its class name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import import_module
from typing import Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec

# zdt's classes for the codec names zarr >= 3.2 also implements: what zdt's installed
# <prefix>/etc/zarr/zdt.yaml configures (tests check the two agree)
IMPLEMENTATIONS = {
    "cast_value": "zdt.codecs.zarr.cast_value.CastValueCodec",
    "scale_offset": "zdt.codecs.zarr.scale_offset.ScaleOffsetCodec",
}
# zarr's own classes for the same codec names (zarr >= 3.2)
_ZARR_BUILTINS = {
    "cast_value": ("zarr.codecs.cast_value", "CastValue"),
    "scale_offset": ("zarr.codecs.scale_offset", "ScaleOffset"),
}


def zarr_builtin(name: str) -> str | None:
    """Qualified name of zarr's own implementation of a codec, if this zarr ships one."""
    module, cls = _ZARR_BUILTINS[name]
    try:
        found = hasattr(import_module(module), cls)
    except ImportError:
        return None
    return f"{module}.{cls}" if found else None


def zarr_builtins_usable() -> bool:
    """zarr ships cast_value and scale_offset and can run them (they need cast-value-rs)."""
    try:
        import cast_value_rs  # noqa: F401
    except ImportError:
        return False
    return all(zarr_builtin(name) is not None for name in _ZARR_BUILTINS)


def codec_config(implementation: str) -> dict[str, str]:
    """zarr config keys selecting "zdt"'s or "zarr"'s own class for cast_value and scale_offset."""
    return {f"codecs.{name}": (IMPLEMENTATIONS[name] if implementation == "zdt"
                               else ".".join(_ZARR_BUILTINS[name]))
            for name in _ZARR_BUILTINS}


def stop_zarr_io(timeout: float = 30.0) -> None:
    """Cancel what zarr's IO loop still runs and wait until it has stopped, store writes that
    were already handed to threads included. For the way out of an interrupted process only:
    zarr cannot do IO in this process afterwards.

    zarr's ``sync`` stops *waiting* on Ctrl-C, but the coroutine goes on in zarr's IO thread
    and may write a chunk (recreating its directories) after the caller has cleaned up.
    """
    import asyncio

    from zarr.core import sync as zarr_sync

    loop = zarr_sync.loop[0]
    if loop is None or loop.is_closed() or not loop.is_running():
        return

    async def cancel_all() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # a cancelled asyncio.to_thread call leaves its thread running: wait for those too
        await loop.shutdown_default_executor()

    asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout)


def settle_zarr_io(timeout: float = 30.0) -> None:
    """Wait until what zarr's IO loop runs now has ended, without cancelling it (zarr stays
    usable). A store write that fails inside zarr's gather of a region's chunks leaves that
    region's other chunk writes running: a caller that cleans up after the error must let them
    end first, or they write after it (recreating what it removed)."""
    import asyncio

    from zarr.core import sync as zarr_sync

    loop = zarr_sync.loop[0]
    if loop is None or loop.is_closed() or not loop.is_running():
        return

    async def wait_all() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    try:
        asyncio.run_coroutine_threadsafe(wait_all(), loop).result(timeout + 1)
    except Exception:           # (a loop that will not settle: clean up all the same)
        pass


@dataclass(frozen=True)
class _ProbeChangeDtype(ArrayArrayCodec):
    is_fixed_size = True

    def resolve_metadata(self, chunk_spec):  # type: ignore[no-untyped-def]
        from zarr.core.dtype import Int8

        return replace(chunk_spec, dtype=Int8(), fill_value=np.int8(0))

    def to_dict(self):  # type: ignore[no-untyped-def]
        return {"name": "zdt_probe_change"}

    async def _encode_single(self, chunk_array, chunk_spec):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def _decode_single(self, chunk_array, chunk_spec):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    def compute_encoded_size(self, input_byte_length, chunk_spec):  # type: ignore[no-untyped-def]
        return input_byte_length


_PROBE_SEEN: list[object] = []


@dataclass(frozen=True)
class _ProbeRecord(_ProbeChangeDtype):
    def evolve_from_array_spec(self, array_spec):  # type: ignore[no-untyped-def]
        _PROBE_SEEN.append(array_spec.dtype.to_json(zarr_format=3))
        return self

    def resolve_metadata(self, chunk_spec):  # type: ignore[no-untyped-def]
        return chunk_spec

    def to_dict(self):  # type: ignore[no-untyped-def]
        return {"name": "zdt_probe_record"}


@lru_cache(maxsize=1)
def zarr_threads_array_spec() -> bool:
    """True if zarr evolves/validates each codec with the spec the previous codecs produce."""
    from zarr.codecs import BytesCodec
    from zarr.core.dtype import Int16
    from zarr.core.metadata.v3 import ArrayV3Metadata

    _PROBE_SEEN.clear()
    # Build metadata directly (pure, synchronous): this may run inside zarr's event loop,
    # where the sync API cannot be called.
    ArrayV3Metadata(
        shape=(1,), data_type=Int16(),
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": (1,)}},
        chunk_key_encoding={"name": "default"}, fill_value=0,
        codecs=[_ProbeChangeDtype(), _ProbeRecord(), BytesCodec()],
        attributes={}, dimension_names=None,
    )
    return bool(_PROBE_SEEN) and _PROBE_SEEN[-1] == "int8"


def array_spec_before(codec: object, array_spec: Any) -> Any | None:
    """On zarr that does not thread specs (3.1.x): the spec `codec` will really receive, found
    while ``ArrayV3Metadata.__init__`` evolves its codecs, by running the codecs before it.

    That zarr calls every codec's ``evolve_from_array_spec`` with the array's own spec, which
    is wrong for a codec behind a value- or type-changing one; without this, cast_value could
    only check the fill value at the first read or write. The metadata constructor's locals
    (``codecs_parsed_partial``, ``array_spec``) are the only place the chain is visible; this
    returns None whenever they are not what zarr 3.1.x has (nested codecs, other callers),
    and the check then happens in ``resolve_metadata`` instead.
    """
    frame = sys._getframe(1)
    for _ in range(6):
        frame = frame.f_back
        if frame is None:
            return None
        if frame.f_code.co_name != "__init__":
            continue
        codecs = frame.f_locals.get("codecs_parsed_partial")
        spec = frame.f_locals.get("array_spec")
        if codecs is None or spec is None or spec is not array_spec:
            continue
        try:
            for c in codecs:
                if c is codec:
                    return spec
                if not isinstance(c, ArrayArrayCodec):
                    return None
                spec = c.resolve_metadata(spec)
        except Exception:  # noqa: BLE001 - a codec before us failed: it reports that itself
            return None
        return None
    return None


# --- the serializer of new string arrays ----------------------------------------------------------------
# zarr builds the array -> bytes codec of a new array in zarr.core.array.default_serializer_v3
# from its own classes (not through the registry or config): there is no public route to make
# new string arrays use zdt's vlen codecs. `use_string_codecs()` (an explicit call) asks for
# it; this wraps that function while a choice is set. tests/pipeline/test_zarr_compat.py fails the day
# zarr stops calling it.

_string_serializer: Callable[[Any, Any], Any] | None = None
_zarr_default_serializer: Any = None


def _default_serializer(dtype: Any) -> Any:
    serializer = _zarr_default_serializer(dtype)
    if _string_serializer is not None:
        return _string_serializer(dtype, serializer) or serializer
    return serializer


def string_serializer() -> Callable[[Any, Any], Any] | None:
    return _string_serializer


def set_string_serializer(choose: Callable[[Any, Any], Any] | None) -> None:
    """While `choose` is set, `choose(dtype, zarr_serializer)` may replace the serializer zarr
    picks for a new array (None: keep zarr's). `set_string_serializer(None)` puts zarr's own
    function back."""
    global _string_serializer, _zarr_default_serializer
    import zarr.core.array as za

    if choose is not None and _zarr_default_serializer is None:
        _zarr_default_serializer = za.default_serializer_v3
        za.default_serializer_v3 = _default_serializer
    elif choose is None and _zarr_default_serializer is not None:
        za.default_serializer_v3 = _zarr_default_serializer
        _zarr_default_serializer = None
    _string_serializer = choose


# --- a class name zarr checks ------------------------------------------------------------------------------
# zarr (3.1 to 3.4) accepts a `string` array only if the class of its array -> bytes codec is
# named "VLenUTF8Codec" (zarr.core.metadata.v3.validate_codecs: "TODO: use codec ID instead of
# class name"). A zdt string codec of another layout carries that name for the check; its
# registry key and repr use __qualname__. tests/pipeline/test_zarr_compat.py fails the day zarr checks
# something else.

ZARR_STRING_CODEC_CLASS_NAME = "VLenUTF8Codec"


def passes_string_codec_check(cls: type) -> type:
    """Class decorator: `cls` may serialize zarr's `string` data type."""
    cls.__name__ = ZARR_STRING_CODEC_CLASS_NAME
    return cls
