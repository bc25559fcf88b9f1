"""Simulators of the private algorithms, vectorized over runs."""
