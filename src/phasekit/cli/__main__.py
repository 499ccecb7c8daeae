"""``python -m phasekit.cli``: the same as the ``phasekit`` command."""

from phasekit.cli import main

if __name__ == "__main__":
    main()
