"""A trivial ZDType, loaded by zarr only through its `zarr.data_type` entry point (no import side effects)."""
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
from zarr.core.dtype import ZDType
from zarr.core.dtype.common import HasItemSize
from zarr.errors import DataTypeValidationError

_NATIVE = np.dtype([("tiny", "u1")])  # some numpy dtype nobody else claims exactly


@dataclass(frozen=True, kw_only=True)
class Tiny(ZDType, HasItemSize):
    _zarr_v3_name: ClassVar[Literal["tiny"]] = "tiny"
    dtype_cls = type(_NATIVE)

    @classmethod
    def from_native_dtype(cls, dtype):
        raise DataTypeValidationError("Tiny is never inferred from a native dtype")

    def to_native_dtype(self):
        return np.dtype("u1")

    @classmethod
    def _check_json_v2(cls, data):
        return False

    @classmethod
    def _check_json_v3(cls, data):
        return data == "tiny"

    @classmethod
    def _from_json_v2(cls, data):
        raise DataTypeValidationError("no v2 form")

    @classmethod
    def _from_json_v3(cls, data):
        if cls._check_json_v3(data):
            return cls()
        raise DataTypeValidationError(f"not tiny: {data!r}")

    def to_json(self, zarr_format):
        if zarr_format == 3:
            return "tiny"
        raise ValueError("tiny has no zarr v2 form")

    def _check_scalar(self, data):
        return isinstance(data, int)

    def cast_scalar(self, data):
        return np.uint8(data)

    def default_scalar(self):
        return np.uint8(0)

    def from_json_scalar(self, data, *, zarr_format):
        return np.uint8(data)

    def to_json_scalar(self, data, *, zarr_format):
        return int(data)

    @property
    def item_size(self):
        return 1
