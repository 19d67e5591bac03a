"""The one error a bundle import raises: it names the file, the 1-based line and the field."""


class BundleError(ValueError):
    def __init__(self, file: str, message: str, *, line: int | None = None, field: str | None = None):
        self.file, self.line, self.field, self.message = file, line, field, message
        where = f"{file} line {line}" if line is not None else file
        super().__init__(f"{where}: {message}")
