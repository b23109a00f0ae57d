"""Settings of bench/load.py's server: the demo project's, with the stub engine and a tool-call endpoint."""
import os

from project.settings import *  # noqa: F401,F403
from project.settings import WEBTOOLS

ROOT_URLCONF = "bench.load_urls"
WEBTOOLS = {**WEBTOOLS, "ENGINE_URLS": {"brave": os.environ["BENCH_ENGINE_URL"]}}
