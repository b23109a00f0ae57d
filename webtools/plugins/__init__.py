"""The plugins that ship with webtools. Nothing in the package imports them: the app loads the ones
listed in ``WEBTOOLS["PLUGINS"]``. A plugin may import the runtime, ``net`` and the base, never another
plugin (docs/architecture.md).
"""
