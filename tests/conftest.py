"""Shared fixtures: a user factory and the small test bundle imported into the database."""
import pytest

from tests.bundles import write_bundle


@pytest.fixture
def mini_bundle(tmp_path):
    return write_bundle(tmp_path / "bundle")


@pytest.fixture
def mini_project(db, mini_bundle):
    from annotation.models import Project
    from grading.bundles import bundle_import

    bundle_import(path=mini_bundle)
    return Project.objects.get(slug="mini")
