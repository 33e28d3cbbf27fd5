"""The simulation on real vectors: gradients drawn, every message applied, the exact check, and the
steps of in-network reduction and sharded data parallel.
"""
