"""Cited figures: GPUs and network cards, published model shapes, and measured runs, each with its
source.
"""
