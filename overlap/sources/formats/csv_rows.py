"""CSV files read through pyarrow's streaming reader, with what that reader lets pass silently made an error:

- an unclosed quote: pyarrow takes the rest of the file as one cell and reads the file short. The quotes are
  counted while pyarrow reads (a valid file has an even number); an odd count is confirmed by Python's csv
  module and reported with the line where the quote opened;
- a header line longer than one block (a file with thousands of columns): the header is read whole (up to
  `MAX_HEADER_BYTES`) and the block made large enough to hold it;
- a row longer than a block: one line saying so, instead of pyarrow's message.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import InputError
from ..places.streams import MAX_LINE_BYTES, capped_lines, open_stream, refuse_binary

BLOCK_BYTES = 16 << 20
MAX_HEADER_BYTES = 16 << 20


class _QuoteCounter:
    """A read-only stream that counts the quote characters read through it and checks that its bytes are
    UTF-8: pyarrow checks only the columns it converts, so a file read for its id column alone would pass
    with a latin-1 byte in another column, which the filter (copying whole records) then refuses."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.quotes = 0
        self.closed = False
        self.utf8 = True
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def read(self, nbytes: int = -1) -> bytes:
        data = self._stream.read(nbytes)
        self.quotes += data.count(b'"')
        if self.utf8:
            try:
                self._decoder.decode(data, final=not data)
            except UnicodeDecodeError:
                self.utf8 = False
        return data

    def close(self) -> None:
        self.closed = True
        self._stream.close()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def csv_header(path: str, name: str, filesystem: Any, compression: str | None) -> tuple[list[str], int]:
    """(column names, bytes of the header line) of a CSV file."""
    with open_stream(path, filesystem, compression) as stream:
        head = b""
        # A line ends at \n or at a lone \r (a classic-Mac export, which pyarrow reads): cut at \n alone, such a
        # file was all one header line, which the csv module refused (an internal error).
        while b"\n" not in head and b"\r" not in head and len(head) <= MAX_HEADER_BYTES:
            block = stream.read(1 << 20)
            if not block:
                break
            head += block
    refuse_binary(head[:4096], name)
    line = re.split(b"\r|\n", head, maxsplit=1)[0]
    if b"\n" not in head and b"\r" not in head and len(head) > MAX_HEADER_BYTES:
        raise InputError(f"{name}: the CSV header line is longer than {MAX_HEADER_BYTES >> 20} MiB; is this a "
                         "CSV file?")
    try:
        text = line.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(name, 1, exc.start) from None
    header = next(csv.reader(io.StringIO(text)), []) if text.strip() else []
    if not header:
        raise InputError(f"{name}: the CSV file is empty (no header line)")
    return header, len(line)


def csv_batches(path: str, name: str, filesystem: Any, compression: str | None, include: list[str],
                header_bytes: int, convert: Callable[[Any], Any]) -> Iterator[Any]:
    """`convert(batch)` of each record batch of the CSV file, the columns `include` read as text."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    # Only an unquoted empty cell is null: pyarrow's default null spellings (`NA`, `n/a`, `null`, `NaN`, …) are
    # text as written, as the split's independent check reads them (two `n/a` ids were kept as no ids, and the
    # check then refused the split as holding a repeated id).
    options = pcsv.ConvertOptions(include_columns=include, column_types={c: pa.string() for c in include},
                                  strings_can_be_null=True, quoted_strings_can_be_null=False, null_values=[""])
    block = max(BLOCK_BYTES, 2 * header_bytes + (1 << 20))
    counter = _QuoteCounter(open_stream(path, filesystem, compression))
    try:
        reader = pcsv.open_csv(pa.PythonFile(counter, mode="r"), read_options=pcsv.ReadOptions(block_size=block),
                               convert_options=options)
        for batch in reader:
            if not counter.utf8:
                break
            yield convert(batch)
        if not counter.utf8:  # never a silent stop: the rest of the file would be lost
            found = first_bad_line(path, filesystem, compression)
            raise not_utf8(name, *found) if found is not None else InputError(
                f"{name}: not UTF-8 text; re-encode the file as UTF-8")
    except pa.ArrowInvalid as exc:
        if "utf8" in str(exc).lower().replace("-", ""):
            found = first_bad_line(path, filesystem, compression)
            if found is not None:
                raise not_utf8(name, *found) from None
        if "straddling" in str(exc) or "block" in str(exc).lower():
            raise InputError(f"{name}: a CSV row longer than {block >> 20} MiB (or a quote that is never "
                             "closed); check the file") from None
        raise
    if counter.quotes % 2:
        line = unclosed_quote_line(path, filesystem, compression)
        if line is not None:
            raise InputError(f"{name}: line {line}: a quote opened here is never closed, so the rest of the file "
                             "would be read as one cell; close the quote (a quote inside a quoted cell is "
                             "written twice: \"\")")


def not_utf8(name: str, line: int, byte: int) -> InputError:
    return InputError(f"{name}: line {line}: not UTF-8 text (byte {byte}); re-encode the file as UTF-8 (a latin-1 or "
                      "Windows-1252 export: iconv -f latin1 -t utf-8)")


def first_bad_line(path: str, filesystem: Any, compression: str | None) -> tuple[int, int] | None:
    """(line, byte in the file) of the first byte that is not UTF-8, or None."""
    offset = 0
    with io.BufferedReader(open_stream(path, filesystem, compression), buffer_size=1 << 20) as stream:
        for line_no, raw in capped_lines(stream, path):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return line_no, offset + exc.start
            offset += len(raw)
    return None


def unclosed_quote_line(path: str, filesystem: Any, compression: str | None) -> int | None:
    """The line where a quoted cell opens that the file never closes (None: the quotes are balanced as
    Python's csv module reads them, e.g. a literal quote inside an unquoted cell)."""
    with open_stream(path, filesystem, compression) as stream:
        text = io.TextIOWrapper(io.BufferedReader(_Raw(stream)), encoding="utf-8-sig", errors="replace",
                                newline="")
        reader = csv.reader(text, strict=True)
        csv.field_size_limit(MAX_LINE_BYTES)
        start = 1
        try:
            for _ in reader:
                start = reader.line_num + 1
        except csv.Error:
            return start
    return None


class _Raw(io.RawIOBase):
    """A pyarrow stream as a Python raw stream (for io.BufferedReader)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
