"""Where data lives: locations (paths, URLs, store objects), opening and walking stores, and the
destinations a conversion writes (one class per kind: zdt.stores.destination,
zdt.stores.icechunk). Nothing here knows about encodings."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zdt.stores.destination import Destination
    from zdt.stores.location import Location


def destination_at(loc: Location, resume: bool = False) -> Destination:
    """The destination at `loc`, of the class its kind of store needs (the one place that asks
    which kind a store is)."""
    from zdt.stores.destination import InPlace, StagedDirectory, StagedZip
    from zdt.stores.location import ICECHUNK_SCHEMES

    if loc.scheme in ICECHUNK_SCHEMES:
        from zdt.stores.icechunk import IcechunkBranch

        return IcechunkBranch(loc, resume)
    if loc.scheme == "":
        return StagedDirectory(loc, resume)
    if loc.scheme == "zip":
        return StagedZip(loc, resume)
    return InPlace(loc, resume)
