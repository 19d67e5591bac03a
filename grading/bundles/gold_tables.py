"""gold.parquet and gold.xlsx (README, "Gold files"): the gold table the exporter's chunks kept as
marshalled rows, written typed and in row groups of a fixed size (so the bytes do not depend on how
the export was split between processes), and as a workbook through the one spreadsheet writer
while it stays below the XLSX limits."""
import marshal
from pathlib import Path

from django.conf import settings

from evalsite.spreadsheet import XLSX_MAX_ROWS, XlsxWriter

from .export_io import file_sha256

PARQUET_ROW_GROUP = 131_072


def gold_tables_write(*, out: Path, source: Path, columns: list[str], n: int) -> tuple[dict, dict]:
    """Write gold.parquet (``value`` a float, every other column text, empty as null) and, when it
    fits, gold.xlsx into ``out`` from the ``n`` rows in ``source`` (removed afterwards). Returns
    ({file: sha256}, {file not written: why})."""
    import pyarrow as pa  # lazy: only an export loads Arrow
    import pyarrow.parquet as pq  # lazy: with Arrow

    schema = pa.schema([pa.field(name, pa.float64() if name == "value" else pa.string()) for name in columns])
    not_written: dict[str, str] = {}
    xlsx = None
    xlsx_max = min(XLSX_MAX_ROWS - 1, getattr(settings, "EVALSITE_GOLD_XLSX_MAX_ROWS", 250_000))
    if n <= xlsx_max:
        xlsx = XlsxWriter(out / "gold.xlsx")
        xlsx.sheet("gold", columns)
    elif n + 1 > XLSX_MAX_ROWS:
        not_written["gold.xlsx"] = f"{n:,} gold rows: more than an XLSX worksheet holds (use gold.parquet or gold.csv)"
    else:  # a workbook costs about 90 µs a row to write, and a spreadsheet of this length is no way to read it
        not_written["gold.xlsx"] = (f"{n:,} gold rows: more than EVALSITE_GOLD_XLSX_MAX_ROWS ({xlsx_max:,}); "
                                    "use gold.parquet or gold.csv")
    pending: list[tuple] = []

    def flush(writer, rows):
        arrays = [pa.array([row[i] for row in rows] if field.name == "value" else [row[i] or None for row in rows],
                           type=field.type) for i, field in enumerate(schema)]
        writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=PARQUET_ROW_GROUP)

    with pq.ParquetWriter(out / "gold.parquet", schema, compression="zstd") as parquet, open(source, "rb") as rows:
        while True:
            try:
                chunk = marshal.load(rows)
            except EOFError:
                break
            if xlsx is not None:
                xlsx.rows(chunk)
            pending.extend(chunk)
            while len(pending) >= PARQUET_ROW_GROUP:
                flush(parquet, pending[:PARQUET_ROW_GROUP])
                del pending[:PARQUET_ROW_GROUP]
        if pending or not n:
            flush(parquet, pending)  # (an empty gold set: one empty row group, so readers see the columns)
    source.unlink()
    written = {"gold.parquet": file_sha256(out / "gold.parquet")}
    if xlsx is not None:
        xlsx.close()
        written["gold.xlsx"] = file_sha256(out / "gold.xlsx")
    return written, not_written
