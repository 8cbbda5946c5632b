"""zdt.predict: error-bounded prediction (array -> bytes), what its zarr v3 codec and numcodecs
codec compute. The spec, byte layout included, is docs/codecs/predict.md; the implementation is
the C library libzdtpredict (include/zdt_predict.h), compiled into zdt.kernels._predict_core.

A chunk is predicted element by element from neighbours already reconstructed, the prediction
error quantized in steps of 2E into 16-bit symbols, the values that cannot be predicted within E
stored exactly. Behind a 16-byte header, one of four entropy stages: 3, zdt's own rANS with a
table for each context, what `entropy="auto"` writes; 0, the symbols as byte planes and the
exact values in one zstd frame, which auto also tries where many codes are wide; 1 and 2, the
symbols in pcodec's standalone format (2: each level group apart), readable and still written
when asked for. Integer arrays (int8 .. uint32) are coded as their values in float64; masked
chunks (format 2, kind 2) carry the fill-value elements as a mask stream; relative chunks
(format 2, kind 1) the values' logarithms; format 3 a step for each interpolation level.

The Python side, by job:
  zdt.codecs.predict_config  the configuration (PredictConfig, ReferenceMask, the data types)
  zdt.codecs.predict_chunk   the chunk's layout and the calls that write and read one
  zdt.kernels._predict_core  the C library under them (its zstd: numcodecs'; pcodec: the
                             pcodec package's)
This module gathers their public names.
"""

from __future__ import annotations

from zdt.codecs.predict_chunk import (FORMAT2_MAGIC, FORMAT3_MAGIC, FORMAT_MAGIC, GROUPS, HEADER,
                                      KIND_RELATIVE, LEVEL_STEPS, MAGIC, MASKED_HEADER,
                                      MASKED_KIND, PCO_LENGTH, RELATIVE_HEADER, corrupt,
                                      fill_array, fill_value, grid4, integer_bound)
from zdt.codecs.predict_config import (CHOICES, CODEC, DTYPES, EFFORTS, INTEGERS, KEYS, NONFINITE,
                                       PREDICTORS, REFERENCE_BITS, STAGE_CHOICES, STAGES,
                                       PredictConfig, ReferenceMask, check_dtype)

__all__ = ["CHOICES", "CODEC", "DTYPES", "EFFORTS", "FORMAT2_MAGIC", "FORMAT3_MAGIC", "FORMAT_MAGIC",
           "GROUPS", "HEADER", "INTEGERS", "KEYS", "KIND_RELATIVE", "LEVEL_STEPS", "MAGIC",
           "MASKED_HEADER", "MASKED_KIND", "NONFINITE", "PCO_LENGTH", "PREDICTORS",
           "REFERENCE_BITS", "RELATIVE_HEADER", "STAGES", "STAGE_CHOICES", "PredictConfig",
           "ReferenceMask", "check_dtype", "corrupt", "fill_array", "fill_value", "grid4",
           "integer_bound"]
