"""One module per dashboard page; each has ``render(settings, filters)``."""
