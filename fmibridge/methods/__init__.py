"""Master algorithms: each a small class with its parameters."""

from .base import Method, State, Step
from .halving import Halving

METHODS: dict[str, type[Method]] = {"halving": Halving}

__all__ = ["METHODS", "Halving", "Method", "State", "Step"]
