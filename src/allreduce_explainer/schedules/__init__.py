"""The algorithms as data: who sends which chunk to whom at each step, over a topology of links."""
