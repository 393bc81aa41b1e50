"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from fmibridge.methods._contact import ContactFunctions

class ProjectionFunctions(ContactFunctions): ...
