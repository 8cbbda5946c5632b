"""Type stub for the compiled cast kernels (zdt/_cast.pyx)."""

BLOCK_SIZE: int

def cast_flat(
    src: object,
    dst: object,
    src_format: tuple[int | bool, ...],
    dst_format: tuple[int | bool, ...],
    rounding: int,
    out_of_range: int,
    map_entries: list[tuple[int, int, int]],
    fast: tuple | None = None,
) -> tuple[int, int]: ...

def cpu_level() -> int: ...
