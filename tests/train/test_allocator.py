"""fyexp.train.allocator: glibc's malloc thresholds are set once per process, can be switched off, and change no number
(a paper-shaped FY β-VAE epoch gives the same parameters bit for bit with and without them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import hashlib, json, sys
    import torch
    from fyexp.train.allocator import tune_allocator
    tuned = tune_allocator() if sys.argv[1] == "tuned" else False
    torch.set_num_threads(1)
    torch.manual_seed(0)
    from fyexp.models.fy_vae import build_fy_vae
    from fyexp.objectives import ELBO
    from fyexp.train import OptimizerConfig, TrainConfig, Trainer, VariationalTask
    data = torch.rand(64 * 12, 784)
    model = build_fy_vae(784, 512, 256, 1.5, 2.0, "fy")
    task = VariationalTask(model, ELBO(beta=0.01))
    config = TrainConfig(epochs=1, batch_size=64, seed=0, optimizer=OptimizerConfig(lr=5e-5))
    Trainer(config, label="allocator").fit(task, (data,))
    digest = hashlib.sha256(b"".join(v.numpy().tobytes() for v in model.state_dict().values())).hexdigest()
    print(json.dumps({"tuned": tuned, "again": tune_allocator(), "digest": digest}))
""")


def _child(arm: str, **env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, arm], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1", **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_the_thresholds_change_no_number_and_can_be_switched_off():
    default, tuned = _child("default"), _child("tuned")
    assert tuned["tuned"] is True and tuned["again"] is True   # set, and asking again is harmless
    assert default["digest"] == tuned["digest"]                # same parameters after a paper-shaped epoch
    off = _child("tuned", FYEXP_MALLOC="default")
    assert off["tuned"] is False and off["digest"] == default["digest"]


def test_every_cell_and_every_tuning_study_sets_them(monkeypatch, tmp_path):
    """The one code path of a cell (fyexp.run.runner.execute_cell) and of a study (fyexp.spec.tuning.tune_experiment)
    ask for
    the thresholds before any training."""
    import fyexp.train.allocator as allocator
    from fyexp.run import runner
    from fyexp.spec import tuning

    calls = []
    monkeypatch.setattr(allocator, "tune_allocator", lambda: calls.append(1) or True)

    with pytest.raises(AttributeError):  # nothing to run: it stops at once, after asking
        runner.execute_cell.__wrapped__(None, None, None, None, device="cpu", data_dir=None, force=False, progress=None)
    assert calls == [1]
    with pytest.raises(AttributeError):  # no ctx: it stops at once, after asking
        tuning.tune_experiment(None, None, None)
    assert calls == [1, 1]
