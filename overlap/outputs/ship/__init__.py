"""What users ship: the filtered split, the dataset-card section, the atlas repository, and their Hub pushes.

- `splits`: the filtered split and its removed rows and id lists, written and proved; `filter_plan` decides
  which rows go and why, `split_files` writes and reads back the shards, and `verify/` checks the
  written files with code it shares with none of them;
- `cards`: the card section and `.overlap/<bench>.json` of a training dataset;
- `atlas_repo`: the atlas as a folder laid out like a Hub dataset repository, and its upload;
- `hub`: the Hugging Face Hub client and the access check every push makes first.
"""
