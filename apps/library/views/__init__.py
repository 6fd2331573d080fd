"""Library pages, split by what they are about."""
