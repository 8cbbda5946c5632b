"""Codec semantics shared by both faces (configurations, plans, errors), and the faces: zarr v3
codecs in zdt.codecs.zarr, numcodecs codecs in zdt.codecs.numcodecs."""
