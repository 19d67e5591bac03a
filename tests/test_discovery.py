"""A package's modules are imported once, and a thread asking while another imports them waits for
them all (evalsite.discovery): before, a second thread found discovery marked done and read a
registry half-filled (one of two first requests at once answered a report's URL 404)."""
import sys
import threading
import uuid

from evalsite.discovery import PackageModules


def _write_package(tmp_path, monkeypatch, files) -> str:
    """A package of a fresh name on the path; ``files(name)``: its modules' texts by file name."""
    name = f"discovered_{uuid.uuid4().hex}"
    folder = tmp_path / name
    folder.mkdir()
    for file, text in files(name).items():
        (folder / file).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def _package(tmp_path, monkeypatch) -> str:
    """A package of two declaring modules; the first waits, while being imported, to be let go."""
    return _write_package(tmp_path, monkeypatch, lambda name: {
        "__init__.py": "import threading\nDECLARED = []\nENTERED = threading.Event()\nRELEASE = threading.Event()\n",
        "first.py": f"from {name} import DECLARED, ENTERED, RELEASE\n"
                    "ENTERED.set()\nassert RELEASE.wait(60)\nDECLARED.append('first')\n",
        "second.py": f"from {name} import DECLARED\nDECLARED.append('second')\n",
        "registry.py": "",
    })


def test_a_second_thread_waits_for_every_module(tmp_path, monkeypatch):
    name = _package(tmp_path, monkeypatch)
    modules = PackageModules(name, skip={"registry"})
    package = __import__(name)
    importer = threading.Thread(target=modules.import_all)
    importer.start()
    assert package.ENTERED.wait(60)  # the first module is being imported, in the other thread
    seen = []
    asker = threading.Thread(target=lambda: (modules.import_all(), seen.append(sorted(package.DECLARED))))
    asker.start()
    package.RELEASE.set()
    for thread in (importer, asker):
        thread.join(60)
    assert seen == [["first", "second"]]  # never [] nor ["first"]: it returned only once all were there
    assert sorted(package.DECLARED) == ["first", "second"] and modules.done  # each imported once
    assert f"{name}.registry" not in sys.modules  # skipped


def test_a_failed_import_is_not_taken_for_done(tmp_path, monkeypatch):
    name = _package(tmp_path, monkeypatch)
    (tmp_path / name / "second.py").write_text("raise RuntimeError('broken declaration')\n")
    __import__(name).RELEASE.set()
    modules = PackageModules(name, skip={"registry"})
    try:
        modules.import_all()
    except RuntimeError:
        pass
    assert not modules.done


def test_a_module_that_asks_while_it_is_imported_does_not_mark_discovery_done(tmp_path, monkeypatch):
    """A module imported directly (not by discovery) whose declaration asks for discovery gets the
    modules as far as they are, itself unfinished: discovery is not done until a later ask finds it
    whole; otherwise another thread would read a registry without its declaration."""
    name = _write_package(tmp_path, monkeypatch, lambda name: {
        "__init__.py": "from evalsite.discovery import PackageModules\nMODULES = PackageModules(__name__)\nSEEN = []\n",
        "asking.py": f"from {name} import MODULES, SEEN\nMODULES.import_all()\nSEEN.append(MODULES.done)\n",
        "other.py": "",
    })
    package = __import__(f"{name}.asking").__dict__  # the module itself, imported first
    modules = package["MODULES"]
    assert package["SEEN"] == [False] and not modules.done  # asked while unfinished: not done
    modules.import_all()
    assert modules.done and f"{name}.other" in sys.modules
