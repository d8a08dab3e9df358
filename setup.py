"""Package discovery for memfs (the metadata is in pyproject.toml).

The repository keeps ``agent/``, ``templates/`` and ``sample_memories/`` at its top (the
layout is part of the design), but they install *inside* the memfs package: nothing named
``agent`` lands in site-packages. setuptools' declarative ``packages.find`` cannot rename
what it finds, so discovery happens here: every package under each folder, found, not
listed by hand.
"""

from setuptools import find_packages, setup

MAPPED = {"memfs.agent": "agent", "memfs.templates": "templates",
          "memfs.sample_memories": "sample_memories"}

packages = find_packages(include=["memfs", "memfs.*"])
for name, folder in MAPPED.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]

setup(packages=packages, package_dir=MAPPED)
