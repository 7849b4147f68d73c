"""``jax.ad``: the markers of ``vjp(...).with_refs`` (declared in modjax.autodiff)."""

from types import SimpleNamespace

from modjax.autodiff.ad_markers import DidntWant, DontWant, GradRef, GradValue

ad = SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef, GradValue=GradValue)
