"""Rows into items and keys: the columns a dataset names, read batch by batch into Items and Keys (the one reader)."""
