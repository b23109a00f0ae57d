"""Test settings: the demo host's, with fixed throwaway keys so no test depends on the environment."""
import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("WEBTOOLS_ENCRYPTION_KEYS", "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg=")

from project.settings import *  # noqa: E402,F401,F403
from project.settings import WEBTOOLS  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
WEBTOOLS = {**WEBTOOLS, "ALLOW_PRIVATE_NETWORKS": False}

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not SQLite's shared in-memory database: the limits' tests write from many threads (which
    # an in-memory database answers with "table is locked" at once, where a file waits its turn) and
    # from worker processes, which open the same file.
    import tempfile

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.path.join(tempfile.gettempdir(), f"webtools-test-{os.getpid()}.sqlite3")
    }
