"""overlap: find where AI training sets and benchmarks contain the same tasks.

Import stays cheap: heavy modules (pandas, pyarrow, huggingface_hub, scipy) load only where used.
"""

__version__ = "0.1.0"
