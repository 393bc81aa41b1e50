"""Master algorithms: each a small class with its parameters."""

from .base import Method, State, Step
from .halving import Halving
from .relaxation import Relaxation

METHODS: dict[str, type[Method]] = {"halving": Halving, "relaxation": Relaxation}

__all__ = ["METHODS", "Halving", "Method", "Relaxation", "State", "Step"]
