"""Names and declarations: the registry of dataset names, the built-in declarations (`declarations/*.toml`), the
one reader of a declared dataset (`declared`), and the loaders of identity data (`adapters`)."""
