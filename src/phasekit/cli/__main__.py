"""``python -m phasekit.cli``: the same as the ``phasekit`` command."""

from phasekit.cli import entry_point

if __name__ == "__main__":
    entry_point()
