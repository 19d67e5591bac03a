"""The embedded broker's messages are written whole before a worker can read them (evalsite.broker):
kombu's file-system transport wrote a message in place, and a worker polling at that moment read
it empty and stopped (JSONDecodeError), which the demo's embedded beat, sending the judge-run sweeper
every few seconds, made a matter of hours (issue 27, point 3)."""
import os
from pathlib import Path
from queue import Empty

import pytest
from django.conf import settings
from kombu import Connection

from evalsite import broker


@pytest.fixture
def channel(tmp_path):
    folders = {name: tmp_path / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir()
    options = {"data_folder_in": str(folders["queue"]), "data_folder_out": str(folders["queue"]),
               "processed_folder": str(folders["processed"]), "control_folder": str(folders["control"])}
    with Connection("filesystem://", transport="evalsite.broker:FilesystemTransport", transport_options=options) as conn:
        yield conn.default_channel


def test_a_message_becomes_visible_only_once_written_whole(channel, monkeypatch):
    renamed = []

    def replace(partial, final):
        # written, not yet under its name: a worker polling now finds nothing to read
        with pytest.raises(Empty):
            channel._get("work")
        assert not Path(final).exists() and Path(partial).stat().st_size > 0
        renamed.append(final)
        real_replace(partial, final)

    real_replace = os.replace
    monkeypatch.setattr(broker.os, "replace", replace)
    channel._put("work", {"body": "the sweeper", "n": 1})
    assert renamed and channel._get("work") == {"body": "the sweeper", "n": 1}
    with pytest.raises(Empty):
        channel._get("work")


def test_the_embedded_broker_uses_it():
    assert settings.CELERY_BROKER_URL.startswith("filesystem") or settings.CELERY_BROKER_TRANSPORT is None
    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        from evalsite.celery import app

        with app.connection_for_write() as conn:
            assert isinstance(conn.transport, broker.FilesystemTransport)
