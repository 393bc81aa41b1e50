"""fmibridge: an FMI co-simulation master for mechanical systems with impacts.

HybridSystem -> Method -> Result -> DataFrame / CSV / plot. Layers, bottom to
top (``tests/test_layers.py``): `core`, `flows`, `methods`, `models`,
`formats`, then the front doors `simulation`, `fmpy_api` (``import fmibridge
as fmpy``), `sweep`, `validation`, `examples` and `cli`. Public names load on
first use, so ``import fmibridge`` imports no pandas, scipy or matplotlib.
"""

from importlib import import_module
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from . import _moved  # noqa: F401 - old module paths import with a warning

_HERE = Path(__file__).parent
if not any((_HERE / "core" / f"_functions{s}").exists() for s in EXTENSION_SUFFIXES):
    raise ImportError(
        f"fmibridge's compiled core is not built in {_HERE}: this is the source "
        "tree (Python puts the working directory first on its path). Build it "
        "there with `pip install -e .`, or run from another folder to use the "
        "installed fmibridge."
    )

# the one place the version is written (pyproject.toml reads it from here), so
# knowing it costs no look-up in the installed packages' metadata
__version__ = "0.2.0"

_PUBLIC = {  # name -> the module that defines it
    name: module
    for module, names in {
        "core.errors": "AdapterError FmibridgeError FmibridgeWarning FMUError",
        "core.integrators": "EULER MIDPOINT RK4 Scheme",
        "core.records": "Event Status",
        "core.result": "Result",
        "core.guards": "Edge Guard UnilateralConstraint VectorGuard",
        "core.system": "HybridSystem Mode",
        "flows": "Flow NativeFlow VectorField",
        "methods": "METHODS Completion Halving Method Relaxation Unilateral",
        "simulation": "simulate",
        "fmpy_api": "dump plot_result read_model_description simulate_fmu",
    }.items()
    for name in names.split()
}

__all__ = sorted([*_PUBLIC, "__version__"])


def __getattr__(name: str) -> object:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'fmibridge' has no attribute {name!r}")
    if _PUBLIC[name] != "core.errors":  # the one that needs no numpy
        # numpy first, from this shallow frame: imported deep in fmibridge's
        # modules it starts slower on CPython 3.11 (commit fbd20fe)
        import numpy  # noqa: F401

    value = getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
