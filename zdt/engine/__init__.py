"""The encoding engine: from a store's arrays and an error bound to a plan, and from a plan to a
re-encoded copy. Its public face is zdt.engine.api (``zdt.suggest``, ``zdt.convert``,
``zdt.encoding``); the ``zdt`` command is a layer over it.

    api        suggest, convert, encoding (from dataset), Report
    dataset    zdt.encoding for xarray Datasets in memory
    selection  which arrays are data, and which bound each gets
    decide     per array: the survey, the candidates, the measurement, the decision
    survey     the full streaming pass: range, specials, grids
    candidates the encodings that may keep a bound
    measure    each candidate's bytes and error on chunks in memory
    bounds     a bound, and the exact check of decoded values against it
    compressors the last stage's choices (keep, none, zstd, blosc, gzip, JSON)
    plan       Decision, Plan: printed, as JSON, applied
    writer     carrying out a plan, unit by unit, into a destination
    cluster    the same passes on a dask.distributed cluster
    arrays     an array as the engine sees it (storage units, sentinels, values)
"""
