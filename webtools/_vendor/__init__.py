"""Third-party code carried inside webtools, unchanged; each package's README.md says why."""
