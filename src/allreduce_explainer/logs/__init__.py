"""nccl-tests logs: read (parse), fitted to a line (alphabeta) and to NCCL's model (ncclfit), and
explained (explain).
"""
