"""The judge's side of the workers: starting them (a fresh interpreter, or the fork server)
and the handle through which the judge calls one, with time limits. Runs in the judge."""
