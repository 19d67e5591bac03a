"""Django's SQLite backend, reading a decimal column that holds a number beyond its digits.

SQLite stores whatever number it is given in a ``decimal(10, 4)`` column (issue 27, point 4: a
bundle once set a judge's price to 1e300), and Django's converter then raises
``decimal.InvalidOperation`` on every read of the row: the project page, its judges page, the
admin's judge list and every later import of the project. Here such a value is read as the number
it is, unrounded, so pages show it and forms refuse it until someone corrects it. PostgreSQL
refuses such values on write and needs no change. The settings select this engine for SQLite.
"""
import decimal

from django.db.backends.sqlite3 import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def get_decimalfield_converter(self, expression):
        converter = super().get_decimalfield_converter(expression)
        as_stored = decimal.Context(prec=15).create_decimal_from_float  # SQLite keeps 15 significant digits

        def tolerant(value, expression, connection):
            try:
                return converter(value, expression, connection)
            except decimal.InvalidOperation:  # beyond the column's digits: the number as stored
                return as_stored(value) if isinstance(value, float) else decimal.Decimal(value)

        return tolerant


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
