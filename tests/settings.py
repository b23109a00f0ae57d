"""Test settings: the demo host's, with fixed throwaway keys so no test depends on the environment."""
import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production-0123456789")
os.environ.setdefault("WEBTOOLS_ENCRYPTION_KEYS", "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg=")

from project.settings import *  # noqa: E402,F401,F403
from project.settings import WEBTOOLS  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
WEBTOOLS = {**WEBTOOLS, "ALLOW_PRIVATE_NETWORKS": False}
