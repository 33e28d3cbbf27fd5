"""The site bench's parts, by what they measure (bench/site.py runs them): start-up, interaction,
bytes (traffic) and the floor, over one harness."""
