"""Units as SSP and FMI define them: exponents of base units, factor and offset.

A value v in a unit is factor * v + offset in kg^a m^b s^c A^d K^e mol^f cd^g
rad^h (SSP's ssc:Unit, FMI's UnitDefinitions). Two spellings are one unit
where their definitions agree; without definitions, only the same spelling is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

BASE_UNITS = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


@dataclass(frozen=True)
class UnitDefinition:
    """A unit as exponents of BASE_UNITS, with factor and offset to SI.

    Examples
    --------
    >>> torque = UnitDefinition((1, 2, -2, 0, 0, 0, 0, 0))
    >>> str(torque), str(UnitDefinition((0,) * 7 + (1,), factor=0.0174533))
    ('kg.m2.s-2', 'rad, factor 0.0174533')
    """

    exponents: tuple[int, ...]
    factor: float = 1.0
    offset: float = 0.0

    def __str__(self) -> str:
        powers = [
            name if n == 1 else f"{name}{n}"
            for name, n in zip(BASE_UNITS, self.exponents, strict=True)
            if n
        ]
        text = ".".join(powers) or "1"
        if self.factor != 1.0:
            text += f", factor {self.factor:g}"
        if self.offset != 0.0:
            text += f", offset {self.offset:g}"
        return text


Definitions = Mapping[str, UnitDefinition]


def same_unit(
    a: str, b: str, defines_a: Definitions, defines_b: Definitions | None = None
) -> bool:
    """True if units `a` and `b` (defined in `defines_b`, default `defines_a`)
    are spelled alike or defined alike."""
    if a == b:
        return True
    first = defines_a.get(a)
    second = (defines_a if defines_b is None else defines_b).get(b)
    return first is not None and first == second


def described(a: str, b: str, defines_a: Definitions, defines_b: Definitions) -> str:
    """What the definitions say of a and b, for a message: " ('Nm' is
    kg.m2.s-2, 'N.m' is undefined)"."""
    said = [
        f"{name!r} is {table[name]}" if name in table else f"{name!r} is undefined"
        for name, table in ((a, defines_a), (b, defines_b))
    ]
    return f" ({', '.join(said)})"
