"""Pure identity normalisers: one module per id scheme."""
