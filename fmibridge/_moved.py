"""Module paths that moved in 0.2, importable under the old name with a
DeprecationWarning for one release.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

MOVED = {  # old module -> new module
    "fmibridge.errors": "fmibridge.core.errors",
    "fmibridge.integrators": "fmibridge.core.integrators",
    "fmibridge.bracket": "fmibridge.core.events",
    "fmibridge.result": "fmibridge.core.result",
    "fmibridge.system": "fmibridge.core.system",
    "fmibridge.contact": "fmibridge.methods.contact",
    "fmibridge.lagrangian": "fmibridge.models.lagrangian",
    "fmibridge.lagrangian_models": "fmibridge.models.or_ames",
    "fmibridge.pronk": "fmibridge.models.pronk",
    "fmibridge.adapters": "fmibridge.formats.adapters",
    "fmibridge.expressions": "fmibridge.formats.expressions",
    "fmibridge.validation.oscillator": "fmibridge.models.oscillator",
}


class _MovedFinder:
    """Loads a moved module's old name as the new module (PEP 451)."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = MOVED[spec.name]
        warnings.warn(
            f"`{spec.name}` moved to `{new}`; the old path goes in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module) -> None:
        """Nothing to run: `create_module` returned the imported new module."""


sys.meta_path.append(_MovedFinder())  # on the package's import: a module runs once
