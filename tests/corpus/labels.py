"""Write the corpus's labels file: ``python -m tests.corpus.labels`` (``--check`` compares)."""

from __future__ import annotations

import sys

from ._labels import LABELS_FILE, all_labels, read_labels, write_labels

if __name__ == "__main__":
    if "--check" in sys.argv:
        same = [lab.to_dict() for lab in read_labels()] == [lab.to_dict() for lab in all_labels()]
        print("labels.jsonl is up to date" if same else "labels.jsonl differs from the generator")
        sys.exit(0 if same else 1)
    print(f"wrote {write_labels()} labels to {LABELS_FILE}")
