"""The embedded file-system broker of the demo (``CELERY_BROKER_URL=filesystem://``), with each
message written whole before a worker can see it.

kombu's file-system transport creates a message's file under its final name and then writes
it; a worker polling the folder in between moves and reads an empty or partial file and stops
("Unrecoverable error: JSONDecodeError"), losing the message. The demo's worker runs Celery beat
inside it (``worker -B``), which sends the judge-run sweeper every few seconds, so the race
that a rare send could lose became one a day could hit. Here a message is written under a name
no reader takes (``.part`` after the queue's ``.msg``) and renamed to its final name, which is
atomic within a folder; reading is kombu's. Selected by ``CELERY_BROKER_TRANSPORT`` in the
settings whenever the broker URL is ``filesystem://``.
"""
import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

PARTIAL_SUFFIX = ".part"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put ``payload`` on ``queue``: written beside its final name, then renamed to it."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX  # "<queue>.msg.part": a reader looks for "<queue>.msg" only
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class FilesystemTransport(filesystem.Transport):
    Channel = Channel
