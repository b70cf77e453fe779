"""A baseline batch's scores for each item's delta, kept on disk: memory flat in its size."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from typing import final

from scorecore.evals import ScoreRow
from scorecore.evals.store import row_item_id

__all__ = ["BaselineScores"]


@final
class BaselineScores(Mapping[tuple[str, str], float | None]):
    """A baseline's score per (scorer id, item id), ``None`` when not scored, an item's last
    trial winning (as a dict built over its rows in order): the report's delta column.

    Kept in a private temporary SQLite database (on disk past a few megabytes of cache), so
    that a baseline of millions of rows costs no memory; :meth:`close` removes it.

    >>> from scorecore.evals import ScoreRow
    >>> scores = BaselineScores()
    >>> scores.add([ScoreRow(id="1", scorer_id="s", run_id="b:1", batch_id="b",
    ...                      status="scored", score=0.5)])
    >>> scores.get(("s", "1"), ""), scores.get(("s", "2"), "")
    (0.5, '')
    >>> scores.close()
    """

    def __init__(self) -> None:
        # "": SQLite's private temporary database, deleted when the connection closes.
        self._db = sqlite3.connect("")
        self._db.execute("CREATE TABLE scores (scorer TEXT NOT NULL, item TEXT NOT NULL, "
                         "score REAL, PRIMARY KEY (scorer, item)) WITHOUT ROWID")

    def add(self, rows: Iterable[ScoreRow]) -> None:
        """Take the baseline's next rows (in its order: a later trial replaces an earlier)."""
        self._db.executemany(
            "INSERT OR REPLACE INTO scores VALUES (?, ?, ?)",
            ((r.scorer_id, row_item_id(r), r.score if r.status == "scored" else None)
             for r in rows))

    def __getitem__(self, key: tuple[str, str]) -> float | None:
        found = self._db.execute("SELECT score FROM scores WHERE scorer = ? AND item = ?",
                                 key).fetchone()
        if found is None:
            raise KeyError(key)
        score: float | None = found[0]
        return score

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for scorer, item in self._db.execute("SELECT scorer, item FROM scores"):
            yield str(scorer), str(item)

    def __len__(self) -> int:
        count: int = self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
        return count

    def close(self) -> None:
        """Remove the database."""
        self._db.close()
