"""Bulk row insertion for large imports: PostgreSQL COPY through psycopg 3, and a plain
``executemany`` elsewhere. Both skip model instantiation, which dominates ``bulk_create``
at a few hundred thousand rows. Rows are tuples already in database form (JSON as text).
"""
from collections.abc import Iterable, Sequence

from django.db import connection

BATCH_ROWS = 5000


def insert_rows(table: str, columns: Sequence[str], rows: Iterable[tuple]) -> int:
    cols = ", ".join(connection.ops.quote_name(c) for c in columns)
    count = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY {connection.ops.quote_name(table)} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
            return count
        sql = f"INSERT INTO {connection.ops.quote_name(table)} ({cols}) VALUES ({', '.join(['%s'] * len(columns))})"
        batch: list[tuple] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= BATCH_ROWS:
                cursor.executemany(sql, batch)
                count += len(batch)
                batch.clear()
        if batch:
            cursor.executemany(sql, batch)
            count += len(batch)
    return count
