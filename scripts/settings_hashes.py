"""Print the settings hash of every cell of every experiment at every profile, one line each (sorted).

``experiment profile cell-key hash``; the hash is :func:`fyexp.store.provenance.record.settings_hash` of
:func:`fyexp.spec.settings.cell_settings` on a CPU without data identity, so two checkouts compare by ``diff``:
a change of how settings are declared or validated must leave every line as it was.  Also prints, per profile,
the hash of the whole ``Config`` as JSON (``<experiment> <profile> * <hash>``).  Imports every runner (torch).
"""

from __future__ import annotations

import sys

from fyexp.experiments import get_experiment
from fyexp.store.plain import jsonable
from fyexp.store.provenance.record import settings_hash
from fyexp.spec.settings import cell_settings
from fyexp.spec.specs import available_specs, load_spec, resolve


def main() -> int:
    lines = []
    for name in available_specs():
        spec = load_spec(name)
        experiment = get_experiment(spec.runner)
        for profile in spec.profile_names():
            resolved = resolve(spec, profile, type(experiment).Config)
            lines.append(f"{name} {profile} * {settings_hash(jsonable(resolved.config))}")
            for cell in experiment.cells(resolved.config, resolved.seeds):
                settings = cell_settings(resolved, cell, "cpu", None, experiment)
                lines.append(f"{name} {profile} {cell.key} {settings_hash(settings)}")
    sys.stdout.write("\n".join(sorted(lines)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
