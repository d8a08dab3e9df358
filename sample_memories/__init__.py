"""Ready-made pairs that ``memfs demo`` turns into git repositories (package data)."""
