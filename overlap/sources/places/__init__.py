"""Where a dataset's files are: a local file, folder or glob, the Hub, the Hub cache, GitHub; their bytes opened."""
