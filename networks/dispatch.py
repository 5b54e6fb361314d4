"""JAX's CPU dispatch for this platform: synchronous.

Every CPU evaluation here is waited for at once: `NetworkValueFunction.apply_padded` reads its
outputs straight away (a search needs the values before its next step), the inference server
runs it in an executor thread, and the learner reads its metrics after every step. Asynchronous
dispatch only adds a hand-off to XLA's worker thread and back, ~30-40 us of CPU a call
(tic-tac-toe SoG(400, 1) makes 400 calls a search: ~4% of its CPU time). The same
compiled programs run, so the numbers are the same bits. Accelerators are not affected.

The setting takes effect only before JAX's CPU backend starts (the first array or jitted call),
so `networks/__init__` imports this module first.
"""
import jax

jax.config.update("jax_cpu_enable_async_dispatch", False)
