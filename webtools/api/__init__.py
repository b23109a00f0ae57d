"""The settings API (DRF) for chat clients: ``urls``, ``views``, ``serializers``, ``parsers``, ``docs``.

Part of the Django shell: may import the host, ``models``, ``forms``, the runtime and the base.
"""
