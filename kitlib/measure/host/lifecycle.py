"""The start/stop protocol of everything the kit creates: what `start` made, `stop` removes."""

from __future__ import annotations


class StartStop:
    """`with x:` runs start(), and stop() whatever happens after, also if start() fails half-way."""

    def start(self) -> None:  # noqa: B027 - optional hook
        """Create what is needed."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Remove what start() created; safe to call twice."""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
