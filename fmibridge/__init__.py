"""fmibridge: an FMI co-simulation master for mechanical systems with impacts.

The flow of data is one straight line: HybridSystem -> Method -> Result ->
DataFrame / CSV / plot.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fmibridge")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

from .errors import AdapterError, FmibridgeError, FmibridgeWarning, FMUError
from .flows import Flow, NativeFlow, VectorField
from .integrators import EULER, MIDPOINT, RK4, Scheme
from .methods import METHODS, Completion, Halving, Method, Relaxation, Unilateral
from .result import Event, Result, Status
from .system import Edge, Guard, HybridSystem, Mode, UnilateralConstraint

__all__ = [
    "EULER",
    "METHODS",
    "MIDPOINT",
    "RK4",
    "AdapterError",
    "Completion",
    "Edge",
    "Event",
    "FMUError",
    "FmibridgeError",
    "FmibridgeWarning",
    "Flow",
    "Guard",
    "Halving",
    "HybridSystem",
    "Method",
    "Mode",
    "NativeFlow",
    "Relaxation",
    "Result",
    "Scheme",
    "Status",
    "Unilateral",
    "UnilateralConstraint",
    "VectorField",
    "__version__",
]
