"""The teaching cost models: lock-step alpha-beta closed forms over two link classes, checked
against the simulation.
"""
