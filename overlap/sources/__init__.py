"""Dataset adapters (one module per dataset family), the registry, and Hub/local/cache resolution."""
