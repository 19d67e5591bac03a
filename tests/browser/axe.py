"""axe-core (vendored from the npm registry, tests/browser/vendor/axe-core) run in the page under
test: ``axe_violations(page)`` injects it and returns the serious and critical violations, each
as "rule: help (selectors of the offending nodes)"."""
from pathlib import Path

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
SEVERE = ("serious", "critical")


def axe_violations(page, *, impacts=SEVERE) -> list[str]:
    # Evaluated through the DevTools protocol, not as a <script> tag: the pages' CSP refuses
    # inline scripts, and must keep refusing them while the test runs.
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;void 0")
    results = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']}: {v['help']} ({', '.join(' '.join(n['target']) for n in v['nodes'][:5])})"
        for v in results["violations"] if v.get("impact") in impacts
    ]
