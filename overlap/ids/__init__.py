"""Pure identity normalisers: one module per id scheme."""

# The id schemes, in the order their recognisers try a value (`recognisers.RECOGNISERS`): a name list light
# enough for what checks a declaration before any data is read.
SCHEMES = ("ossfuzz", "cve", "ghsa", "github_pr", "fix_commit")
# The scheme of ids that only name their row (a set whose tasks carry no source identity): no key is looked for.
LABEL = "label"
