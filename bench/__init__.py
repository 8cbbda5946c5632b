"""zdt's benchmark scripts (installed as zdt.bench so that ``zdt bench`` runs from a wheel).
Each script is run on its own (``python bench/bench_cast.py``, or by ``zdt bench``) and imports
_common from its own directory."""
