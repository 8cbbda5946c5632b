"""Type stub for the compiled cast kernels (zdt/_cast.pyx)."""

BLOCK_SIZE: int

def cast_flat(
    src: object,
    dst: object,
    src_format: tuple[int | bool, ...],
    dst_format: tuple[int | bool, ...],
    src_code: int,
    dst_code: int,
    rounding: int,
    out_of_range: int,
    map_entries: list[tuple[int, int, int]],
    safe_lo: int = 0,
    safe_hi: int = 0,
    use_fast: bool = True,
) -> tuple[int, int]: ...

def cpu_level() -> int: ...
