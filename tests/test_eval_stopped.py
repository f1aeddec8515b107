"""scripts/eval_stopped_fy_vae.py reads a failed cell's parameters from its key: every fy-vae paper cell round-trips."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from eval_stopped_fy_vae import cell_from_key  # noqa: E402

from fyexp.experiments import get_config_class, get_experiment  # noqa: E402
from fyexp.specs import load_spec, resolve  # noqa: E402


def test_every_paper_cell_is_read_back_from_its_key():
    config = resolve(load_spec("fy-vae"), "paper", get_config_class("fy_vae")).config
    cells = get_experiment("fy_vae").cells(config, (0, 1, 2))
    assert len(cells) > 30
    for cell in cells:
        parsed = cell_from_key(cell.key)
        assert parsed == cell and parsed.key == cell.key
        assert isinstance(parsed.params["latent_rho"], float) and isinstance(parsed.params["obs_rho"], float)
