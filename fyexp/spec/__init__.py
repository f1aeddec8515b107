"""What to run: YAML experiment specs resolved into typed configurations (:mod:`.specs`), a cell's settings as
part of its identity (:mod:`.settings`), the figures a spec may name (:mod:`.plots`) and Optuna studies over a
spec's search space (:mod:`.tuning`)."""
