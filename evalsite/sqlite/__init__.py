"""Django's SQLite backend with one difference (``base``): a decimal column is read even when it
holds a number beyond its digits."""
