"""fyexp.maps.newton: α-entmax by safeguarded Newton steps, checked against entmax_bisect and by gradcheck."""

import pytest
import torch
from entmax import entmax_bisect

import fyexp.maps.newton as newton
from fyexp.maps import entmax_newton

ALPHAS = [1.001, 1.05, 1.314, 1.5, 2.0, 2.5, 4.0]


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_matches_bisection_in_float64(alpha, scale):
    torch.manual_seed(0)
    z = torch.randn(16, 300, dtype=torch.float64) * scale
    p = entmax_newton(z, alpha)
    q = entmax_bisect(z, alpha, n_iter=200)
    assert torch.allclose(p.sum(-1), torch.ones(16, dtype=torch.float64), atol=1e-12)
    assert (p >= 0).all()
    assert torch.allclose(p, q, atol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [1.05, 1.314, 1.5, 2.0])
def test_float32_close_to_bisection_with_fewer_steps(alpha):
    torch.manual_seed(1)
    z = torch.randn(64, 2000) * 3
    p = entmax_newton(z, alpha)
    assert torch.allclose(p, entmax_bisect(z.double(), alpha, n_iter=200).float(), atol=2e-5)


@pytest.mark.parametrize("alpha", [1.2, 1.5, 2.0, 3.0])
def test_gradcheck(alpha):
    torch.manual_seed(2)
    z = (torch.randn(3, 7, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: entmax_newton(t, alpha), (z,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("alpha", [1.314, 2.0])
def test_gradient_matches_bisection(alpha):
    torch.manual_seed(3)
    z1 = torch.randn(8, 50, dtype=torch.float64, requires_grad=True)
    z2 = z1.detach().clone().requires_grad_()
    g = torch.randn(8, 50, dtype=torch.float64)
    (entmax_newton(z1, alpha) * g).sum().backward()
    (entmax_bisect(z2, alpha, n_iter=200) * g).sum().backward()
    assert torch.allclose(z1.grad, z2.grad, atol=1e-9)


def test_limits_softmax_and_sparsemax():
    torch.manual_seed(4)
    z = torch.randn(5, 40, dtype=torch.float64)
    assert torch.allclose(entmax_newton(z, 1.0), torch.softmax(z, -1))
    assert torch.allclose(entmax_newton(z, 1.0 + 1e-5), torch.softmax(z, -1), atol=1e-4)
    # sparsemax: Euclidean projection onto the simplex, p = [z - τ]₊
    p = entmax_newton(z, 2.0)
    support = p > 0
    for row in range(5):
        t = (z[row] - p[row])[support[row]]
        assert torch.allclose(t, t[0].expand_as(t))
        assert (z[row][~support[row]] <= t[0] + 1e-12).all()


def test_other_dim_and_half_precision():
    torch.manual_seed(5)
    z = torch.randn(4, 30, 6)
    p = entmax_newton(z, 1.5, dim=1)
    assert torch.allclose(p, entmax_newton(z.transpose(1, 2), 1.5).transpose(1, 2))
    h = entmax_newton(z.to(torch.bfloat16), 1.5, dim=1)
    assert h.dtype == torch.bfloat16 and torch.isfinite(h).all()


def test_peaked_scores_do_not_give_nan():
    z = torch.tensor([[1e4, 0.0, -1e4, 5.0]])
    for alpha in ALPHAS:
        p = entmax_newton(z, alpha)
        assert torch.isfinite(p).all() and torch.allclose(p, torch.tensor([[1.0, 0, 0, 0]]), atol=1e-6)


# ------------------------------------------------------------------ the candidate (sparse) path and the dense one
PATHS = {"sparse": 1.0, "dense": 0.0}  # SPARSE_SHARE forcing each path


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("alpha", [1.01, 1.1, 1.314, 1.5, 1.9, 1.99, 2.0])
def test_each_path_matches_bisection_in_float32(monkeypatch, path, alpha):
    monkeypatch.setattr(newton, "SPARSE_SHARE", PATHS[path])
    torch.manual_seed(6)
    z = torch.randn(32, 500) * 3
    q = entmax_bisect(z.double(), alpha, n_iter=200).float()
    assert torch.allclose(entmax_newton(z, alpha), q, atol=1e-5)
    assert torch.allclose(entmax_newton(z.T, alpha, dim=0), q.T, atol=1e-5)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("alpha", [1.05, 1.314, 1.5, 1.7, 2.0])
def test_each_path_gradcheck(monkeypatch, path, alpha):
    monkeypatch.setattr(newton, "SPARSE_SHARE", PATHS[path])
    torch.manual_seed(7)
    z = (torch.randn(2, 4, 9, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: entmax_newton(t, alpha, dim=1), (z,), eps=1e-6, atol=1e-6)


def test_sparse_path_is_taken_and_agrees_with_dense(monkeypatch):
    """At the FY-NVDM size the candidates are few, the flat path runs, and it gives the dense path's p and
    gradient (to float32 round-off: only the order of the additions differs)."""
    torch.manual_seed(8)
    z = torch.randn(64, 2000) * 2
    x = 0.314 * (z - z.amax(-1, keepdim=True))
    assert (x > newton._bracket(x, 1.314)[0]).float().mean() <= newton.SPARSE_SHARE
    g = torch.randn(64, 2000)
    out = {}
    for path, share in PATHS.items():
        monkeypatch.setattr(newton, "SPARSE_SHARE", share)
        zz = z.clone().requires_grad_()
        p = entmax_newton(zz, 1.314)
        (p * g).sum().backward()
        out[path] = (p, zz.grad)
    assert torch.allclose(out["sparse"][0], out["dense"][0], rtol=1e-5, atol=1e-7)
    assert torch.allclose(out["sparse"][1], out["dense"][1], rtol=1e-4, atol=1e-6)
