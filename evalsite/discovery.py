"""The modules of a package, imported once (``PackageModules``): the registries of reports, judge
backends and data formats are filled by their modules' own declarations as those are imported.
Discovery counts as done only once every module is imported. A thread that asks while another is
still importing them imports them too: Python's import lock of each module makes it wait until
that module is whole, so it never reads a registry half-filled (it did, when the flag was set
before importing: one of two first requests at once answered a report's URL 404). A module whose
own import asks again (a backend's declaration) gets the modules as far as they are: the one being
imported is not imported twice, and discovery is not done yet: that module is not whole until its
import returns (another thread reading the registry meanwhile would miss its declaration), so the
next ask, after it, imports again (which finds every module whole and marks discovery done)."""
import importlib
import pkgutil


class PackageModules:
    def __init__(self, package: str, *, skip=()):
        self.package, self.skip = package, frozenset(skip)
        self.done = False

    def import_all(self) -> None:
        if self.done:
            return
        package = importlib.import_module(self.package)
        whole = True
        for module in pkgutil.iter_modules(package.__path__):
            if module.name not in self.skip:
                imported = importlib.import_module(f"{self.package}.{module.name}")
                # Python marks a module's spec while it runs the module's code: here, further up this thread.
                whole = whole and not getattr(getattr(imported, "__spec__", None), "_initializing", False)
        self.done = whole
