"""The core: what a hybrid system is, what a run returns, and the numerics both
share. The bottom layer: imports nothing of fmibridge above it.
"""
