"""One exec's captured output: bytes kept up to the cap, decoded without splitting a
character, the rest dropped."""

from __future__ import annotations

import codecs

def utf8_prefix_len(data: bytes, limit: int) -> int:
    """Largest cut <= limit that does not split a UTF-8 character of ``data``."""
    if limit >= len(data):
        return len(data)
    cut = max(limit, 0)
    # data[cut] is the first byte dropped; if it continues a character, drop the whole
    # character (at most 3 continuation bytes precede nothing but its lead byte).
    for _ in range(3):
        if cut == 0 or data[cut] & 0xC0 != 0x80:
            break
        cut -= 1
    return cut


class Capture:
    """One output stream of one exec: bytes kept up to the cap, the rest dropped."""

    def __init__(self, cap: int, live: bool = True) -> None:
        self.cap = cap
        self.data = bytearray()
        self.truncated = False
        # Incremental so a character split across two pipe reads decodes correctly in
        # the stream events; yields exactly what decoding ``data`` at once would. None
        # when nobody relays the output live (the exec's `stream: false`): only `text()`
        # decodes it then, once.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace") if live else None

    def add(self, chunk: bytes) -> str:
        """Keep what fits; return the newly decodable text to forward ("" when not live)."""
        if self.truncated:
            return ""
        room = self.cap - len(self.data)
        if len(chunk) > room:
            chunk = chunk[: utf8_prefix_len(chunk, room)]
            self.truncated = True  # from now on everything is dropped
        self.data += chunk
        return self._decoder.decode(chunk) if self._decoder else ""

    def finish(self) -> str:
        """Text held back by the decoder (an incomplete trailing character)."""
        return self._decoder.decode(b"", final=True) if self._decoder else ""

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

