"""Analysis: figures, the papers' claims and their verdicts, statistics tables, the explorer and the
course. Stands on `kitlib.core`, `kitlib.specs` and `kitlib.results` only, so a notebook that reads
`data/sample` loads nothing that measures (no Docker, QEMU, SSH or host command code)."""
