"""Benchmark models and studies (Esposito and Kumar's Examples 1 and 3)."""
